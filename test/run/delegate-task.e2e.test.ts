import { describe, expect, it } from 'vitest';
import type { RecordedRequest, Responder } from '../fake-llm/types.js';
import { agentToml, allArrived, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `delegate_task`: a plan checked whole, then run as a graph — independent sub-tasks at once,
 * each dependent one after its prerequisites with their results, a failed branch skipping only
 * its dependents —, reported in sub-task order.
 */
const setup = e2eHomes();

const isSubtask = (r: RecordedRequest) => r.lastUserText.startsWith('Task: ');
const taskOf = (r: RecordedRequest) => /^Task: (\S+)/.exec(r.lastUserText)?.[1] ?? '';

async function seed(
  args: Record<string, unknown>,
  subtask: Responder = (r) => ({ text: `result of ${taskOf(r)}` }),
  config: string[] = ['delegate = true'],
  env: Record<string, string> = {},
) {
  const { home, fake } = await setup();
  home.agent('lead', agentToml('lead', { subAgents: ['helper'], subAgentsConfig: config }));
  home.agent('helper', agentToml('helper'));
  fake.respond((request) => {
    if (isSubtask(request)) return subtask(request);
    return request.toolResults.length === 0
      ? { toolCalls: [{ name: 'delegate_task', arguments: args }] }
      : { text: 'lead done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
    env: home.env(fake.url, env),
  });
  const lead = fake.requests.filter((r) => !isSubtask(r));
  const subtasks = fake.requests.filter(isSubtask);
  return { result, lead, subtasks, report: lead.at(-1)?.toolResults[0] };
}

describe.concurrent('delegate_task', () => {
  it('a diamond: 1 and 2 at once after 0, 3 after both with both results; the report in order', async () => {
    const sides = allArrived(2);
    const { result, lead, subtasks, report } = await seed(
      {
        plan: 'Diamond',
        subtasks: [
          { task: 'base' },
          { task: 'left', depends_on: [0] },
          { task: 'right', depends_on: 0 },
          { task: 'join', depends_on: [1, 2], agent: 'helper', scope: 'src/' },
        ],
      },
      async (r) => {
        // `left` and `right` are answered only once both are in.
        if (['left', 'right'].includes(taskOf(r))) await sides.arrive();
        return { text: `result of ${taskOf(r)}` };
      },
    );
    expect(result.code).toBe(0);
    expect(lead[0]?.toolNames).toEqual(['call_agent', 'delegate_task']);
    const at = (task: string) => subtasks.find((r) => taskOf(r) === task);
    const [base, left, right, join] = ['base', 'left', 'right', 'join'].map(at);
    expect(left?.receivedAt).toBeGreaterThanOrEqual(base?.finishedAt ?? Number.POSITIVE_INFINITY);
    // Each side arrived before the other was answered (both are held until both are in, so the
    // two can share a millisecond; run one after the other, the second would arrive only after the
    // first's answer, held until the fallback gave up).
    expect(right?.receivedAt).toBeLessThanOrEqual(left?.finishedAt ?? 0);
    expect(left?.receivedAt).toBeLessThanOrEqual(right?.finishedAt ?? 0);
    expect(join?.receivedAt).toBeGreaterThanOrEqual(Math.max(left?.finishedAt ?? 0, right?.finishedAt ?? 0));
    expect(roleOf(join ?? { system: '' })).toBe('helper');
    expect(join?.lastUserText).toBe(
      'Task: join\n\nContext:\nScope: src/\n\nResult of sub-task 1 (left):\nresult of left\n\nResult of sub-task 2 (right):\nresult of right',
    );
    expect(report?.content).toBe(
      [
        'Status: 4 of 4 sub-tasks completed',
        'Plan: Diamond',
        '## Sub-task 0: base\nStatus: completed\n\nresult of base',
        '## Sub-task 1: left\nStatus: completed\n\nresult of left',
        '## Sub-task 2: right\nStatus: completed\n\nresult of right',
        '## Sub-task 3: join\nStatus: completed\n\nresult of join',
      ].join('\n\n'),
    );
    const tree = (JSON.parse(result.stdout) as { agents: { agent: string }[] }).agents;
    expect(tree.map((n) => n.agent)).toEqual(['lead', 'lead', 'lead', 'helper']);
  });

  it('AXE_SUBAGENT_MODEL is the model of every sub-task, a named agent and a worker alike', async () => {
    const { result, lead, subtasks } = await seed(
      { plan: 'p', subtasks: [{ task: 'named', agent: 'helper' }, { task: 'worker' }] },
      undefined,
      undefined,
      { AXE_SUBAGENT_MODEL: 'ollama/llama-test' },
    );
    expect(result.code).toBe(0);
    expect(subtasks.map((r) => `${taskOf(r)} ${r.wire} ${r.model}`).sort()).toEqual([
      'named ollama llama-test',
      'worker ollama llama-test',
    ]);
    expect(lead.every((r) => r.wire === 'anthropic')).toBe(true);
  });

  it('a failed sub-task skips only its dependents; independent branches carry on', async () => {
    const { subtasks, report } = await seed(
      {
        plan: 'Branches',
        subtasks: [{ task: 'broken' }, { task: 'after', depends_on: [0] }, { task: 'alone' }],
      },
      (r) =>
        taskOf(r) === 'broken'
          ? { fault: { kind: 'status', status: 400, message: 'bad request' } }
          : { text: `result of ${taskOf(r)}` },
    );
    expect(subtasks.map(taskOf).sort()).toEqual(['alone', 'broken']);
    expect(report?.isError).toBe(false);
    expect(report?.content).toMatch(
      /## Sub-task 0: broken\nStatus: error \(anthropic: request rejected \(HTTP 400\)/,
    );
    expect(report?.content).toContain('## Sub-task 1: after\nStatus: skipped (sub-task 0 did not complete)');
    expect(report?.content).toContain('## Sub-task 2: alone\nStatus: completed\n\nresult of alone');
  });

  it('mode "sequential": in order, each with the results before it, stopping at the first failure', async () => {
    const { result, subtasks, report } = await seed(
      {
        plan: 'Steps',
        mode: 'sequential',
        subtasks: [
          { task: 'first' },
          { task: 'second', agent: 'helper' },
          { task: 'third' },
          { task: 'fourth' },
        ],
      },
      (r) =>
        taskOf(r) === 'third'
          ? { fault: { kind: 'status', status: 400, message: 'bad request' } }
          : { text: `result of ${taskOf(r)}` },
    );
    expect(result.code).toBe(0);
    // The fourth never ran; each ran after the one before it had its answer (the server's clock).
    expect(subtasks.map(taskOf)).toEqual(['first', 'second', 'third']);
    expect(subtasks[1]?.receivedAt).toBeGreaterThanOrEqual(
      subtasks[0]?.finishedAt ?? Number.POSITIVE_INFINITY,
    );
    expect(subtasks[2]?.receivedAt).toBeGreaterThanOrEqual(
      subtasks[1]?.finishedAt ?? Number.POSITIVE_INFINITY,
    );
    expect(subtasks[2]?.lastUserText).toBe(
      'Task: third\n\nContext:\nResult of sub-task 0 (first):\nresult of first\n\nResult of sub-task 1 (second):\nresult of second',
    );
    expect(report?.content).toMatch(
      /^Status: 2 of 4 sub-tasks completed \(1 error, 1 skipped\)\n\nPlan: Steps\n/,
    );
    expect(report?.content).toContain('## Sub-task 3: fourth\nStatus: skipped (sub-task 2 did not complete)');
    expect(report?.isError).toBe(false);
  });

  it('mode and max_tool_calls are checked: an unknown mode, a bad limit, or depends_on in a sequential plan, is refused before any request', async () => {
    for (const [args, message] of [
      [{ plan: 'p', mode: 'random', subtasks: [{ task: 'a' }] }, '"mode" must be "graph" or "sequential"'],
      [
        { plan: 'p', subtasks: [{ task: 'a', max_tool_calls: 0 }] },
        'subtasks[0].max_tool_calls must be a whole number of at least 1',
      ],
      [
        { plan: 'p', mode: 'sequential', subtasks: [{ task: 'a' }, { task: 'b', depends_on: [0] }] },
        'subtasks[1].depends_on is for mode "graph": sequential sub-tasks run in their order',
      ],
    ] as const) {
      const { subtasks, report } = await seed(args);
      expect(subtasks).toHaveLength(0);
      expect(report).toMatchObject({ content: `delegate_task error: ${message}`, isError: true });
    }
  });

  it('refused before any request: a cycle, a bad index, too many sub-tasks, an unknown agent', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        {
          plan: 'p',
          subtasks: [
            { task: 'a', depends_on: [1] },
            { task: 'b', depends_on: [0] },
          ],
        },
        'delegate_task error: the sub-tasks depend on each other in a cycle: 0 → 1 → 0',
      ],
      [
        { plan: 'p', subtasks: [{ task: 'a', depends_on: [3] }] },
        "delegate_task error: subtasks[0].depends_on: 3 is not another sub-task's index (0 to 0)",
      ],
      [
        { plan: 'p', subtasks: Array.from({ length: 6 }, (_, i) => ({ task: `t${i}` })) },
        'delegate_task error: 6 sub-tasks, more than max_subtasks (5)',
      ],
      [
        { plan: 'p', subtasks: [{ task: 'a', agent: 'stranger' }] },
        'delegate_task error: subtasks[0].agent "stranger" is not in this agent\'s sub_agents list',
      ],
    ];
    for (const [args, message] of cases) {
      const { subtasks, report } = await seed(args);
      expect(subtasks).toHaveLength(0);
      expect(report).toMatchObject({ content: message, isError: true });
    }
  });

  it('a chain of 30,000 sub-tasks closing into a cycle is refused by its ends, not a stack overflow', async () => {
    const steps = 30_000;
    const subtasksArg = Array.from({ length: steps }, (_, i) => ({
      task: `t${i}`,
      depends_on: (i + 1) % steps,
    }));
    const { result, subtasks, report } = await seed({ plan: 'p', subtasks: subtasksArg }, undefined, [
      'delegate = true',
      `max_subtasks = ${steps}`,
    ]);
    expect(result.code).toBe(0);
    expect(subtasks).toHaveLength(0);
    expect(report).toMatchObject({
      content: `delegate_task error: the sub-tasks depend on each other in a cycle: 0 → 1 → 2 → 3 → 4 → … → 29998 → 29999 → 0 (${steps} sub-tasks)`,
      isError: true,
    });
  });
});
