import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, Responder, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, allArrived } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `spawn_agents`: tasks run at once by copies of the calling agent, each with its options, and
 * come back in task order as 004's aggregate.
 */
const setup = e2eHomes();

type Task = Record<string, unknown>;

/** A worker's request: the calling agent's prompt, with its task as the user message. */
const isWorker = (request: RecordedRequest) => request.lastUserText.startsWith('job ');

async function seed(
  tasks: Task[],
  worker: Responder = (r) => ({ text: `did ${r.lastUserText}` }),
  config: string[] = ['spawn = true'],
) {
  const { home, fake } = await setup();
  const file = home.file('work/sub/notes.txt', 'in sub');
  const workdir = path.dirname(path.dirname(file));
  home.file('work/top.txt', 'at top');
  home.file('outside/secret.txt', 'no');
  home.agent(
    'lead',
    agentToml('lead', {
      extra: [`workdir = "${workdir}"`, 'tools = ["read_file", "write_file", "list_directory"]'],
      subAgentsConfig: config,
    }),
  );
  fake.respond((request) => {
    if (isWorker(request)) return worker(request);
    return request.toolResults.length === 0
      ? { toolCalls: [{ name: 'spawn_agents', arguments: { tasks } }] }
      : { text: 'lead done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
    env: home.env(fake.url),
  });
  const lead = fake.requests.filter((r) => !isWorker(r));
  const workers = fake.requests.filter(isWorker);
  const aggregate = lead.at(-1)?.toolResults[0];
  return { result, lead, workers, aggregate, workdir, home };
}

describe.concurrent('spawn_agents', () => {
  it('16 tasks run at once, in task order, as the aggregate; workers cannot spawn', async () => {
    const tasks = Array.from({ length: 16 }, (_, i) => ({ task: `job ${i}` }));
    // No worker is answered until the server has all 16 requests.
    const all = allArrived(tasks.length);
    const { result, lead, workers, aggregate } = await seed(tasks, async (r) => {
      await all.arrive();
      return { text: `did ${r.lastUserText}` };
    });
    expect(result.code).toBe(0);
    expect(lead[0]?.toolNames).toEqual(['read_file', 'write_file', 'list_directory', 'spawn_agents']);
    expect(workers).toHaveLength(16);
    // The server's own clock: every request was in before the first answer went out.
    const lastStart = Math.max(...workers.map((w) => w.receivedAt));
    const firstEnd = Math.min(...workers.map((w) => w.finishedAt ?? 0));
    expect(lastStart).toBeLessThanOrEqual(firstEnd);
    for (const worker of workers) {
      expect(worker.system).toBe('ROLE:lead');
      // Its caller's tools, then the terminal tools every worker is offered.
      expect(worker.toolNames).toEqual([
        'read_file',
        'write_file',
        'list_directory',
        'submit_result',
        'submit_error',
      ]);
    }
    expect(JSON.parse(aggregate?.content ?? '{}')).toEqual({
      sub_agent_results: tasks.map((t, i) => ({
        status: 'completed',
        agent_id: `lead/spawn_agents#1.${i + 1}:lead`,
        task: t.task,
        outcome: { success: { result: `did ${t.task}` } },
      })),
    });
    expect(aggregate?.isError).toBe(false);
    const tree = (JSON.parse(result.stdout) as { agents: { agent: string; status: string }[] }).agents;
    expect(tree).toHaveLength(16);
  });

  it("each task's options reach the server; a stopped worker is a failure of its kind", async () => {
    const { workers, aggregate } = await seed(
      [
        { task: 'job model', model: 'openai/gpt-test' },
        { task: 'job tools', tools: ['read_file'], system_prompt: 'ROLE:reader' },
        { task: 'job ro', read_only: true },
        { task: 'job loop', max_tool_calls: 1 },
        { task: 'job cwd', cwd: 'sub' },
      ],
      (r) => {
        if (r.lastUserText === 'job loop' && r.toolResults.length < 3)
          return { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] };
        if (r.lastUserText === 'job cwd' && r.toolResults.length === 0)
          return { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
        return { text: `did ${r.lastUserText}: ${r.toolResults[0]?.content ?? ''}` };
      },
    );
    const first = (task: string) => workers.find((w) => w.lastUserText === task);
    expect(first('job model')?.wire).toBe('openai');
    expect(first('job tools')?.toolNames).toEqual(['read_file', 'submit_result', 'submit_error']);
    expect(first('job tools')?.system).toBe('ROLE:reader');
    expect(first('job ro')?.toolNames).toEqual([
      'read_file',
      'list_directory',
      'submit_result',
      'submit_error',
    ]);
    expect(workers.filter((w) => w.lastUserText === 'job loop')).toHaveLength(2);
    const results = (JSON.parse(aggregate?.content ?? '{}') as { sub_agent_results: { outcome: object }[] })
      .sub_agent_results;
    expect(results[3]?.outcome).toEqual({
      failure: { error: 'budget exceeded — 1 of 1 tool calls', error_kind: 'budget_exceeded' },
    });
    expect(results[4]?.outcome).toEqual({ success: { result: 'did job cwd: 1: in sub' } });
  });

  it('the aggregate is an error only when every task failed; each task carries its own outcome', async () => {
    // A worker whose task says `fail` gets a refused request (400: no retry).
    const worker = (r: RecordedRequest): ScriptedReply =>
      r.lastUserText.includes('fail')
        ? { fault: { kind: 'status', status: 400, message: `no to ${r.lastUserText}` } }
        : { text: `did ${r.lastUserText}` };
    const cases = [
      { tasks: ['job a', 'job b'], isError: false },
      { tasks: ['job a', 'job fail b', 'job c'], isError: false },
      { tasks: ['job fail a', 'job fail b'], isError: true },
    ];
    const runs = await Promise.all(
      cases.map((c) =>
        seed(
          c.tasks.map((task) => ({ task })),
          worker,
        ),
      ),
    );
    runs.forEach(({ result, aggregate }, i) => {
      const { tasks, isError } = cases[i] ?? { tasks: [], isError: undefined };
      // The lead reads the aggregate and answers: the run itself succeeds either way.
      expect(result.code).toBe(0);
      expect(aggregate?.isError).toBe(isError);
      const results = (JSON.parse(aggregate?.content ?? '{}') as { sub_agent_results: { outcome: object }[] })
        .sub_agent_results;
      expect(results.map((r) => Object.keys(r.outcome)[0])).toEqual(
        tasks.map((task) => (task.includes('fail') ? 'failure' : 'success')),
      );
      for (const [j, task] of tasks.entries()) {
        if (task.includes('fail')) {
          expect(results[j]?.outcome).toMatchObject({ failure: { error_kind: 'error' } });
          expect(JSON.stringify(results[j]?.outcome)).toContain(`no to ${task}`);
        } else expect(results[j]?.outcome).toEqual({ success: { result: `did ${task}` } });
      }
      const tree = (JSON.parse(result.stdout) as { agents: { status: string }[] }).agents;
      expect(tree.map((n) => n.status)).toEqual(
        tasks.map((t) => (t.includes('fail') ? 'error' : 'completed')),
      );
    });
  });

  it('refused before anything starts: a cwd outside the workdir, more than max_spawn, no tasks', async () => {
    const outside = await seed([{ task: 'job a' }, { task: 'job b', cwd: '../outside' }]);
    expect(outside.workers).toHaveLength(0);
    expect(outside.aggregate).toMatchObject({ isError: true });
    expect(outside.aggregate?.content).toMatch(
      /^spawn_agents error: tasks\[1\]\.cwd "\.\.\/outside" is outside the working directory /,
    );

    const many = await seed([{ task: 'job a' }, { task: 'job b' }, { task: 'job c' }], undefined, [
      'spawn = true',
      'max_spawn = 2',
    ]);
    expect(many.workers).toHaveLength(0);
    expect(many.aggregate?.content).toBe('spawn_agents error: 3 tasks, more than max_spawn (2)');

    const none = await seed([]);
    expect(none.aggregate?.content).toBe('spawn_agents error: "tasks" must be a non-empty list of tasks');
  });

  it('without spawn = true there is no spawn_agents tool', async () => {
    const { lead } = await seed([{ task: 'job a' }], undefined, ['parallel = true']);
    expect(lead[0]?.toolNames).toEqual(['read_file', 'write_file', 'list_directory']);
  });

  it('with background = true a task may run in the background, collected with task_output', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgentsConfig: ['spawn = true', 'background = true'] }));
    fake.respond((request) => {
      if (isWorker(request)) return { text: `did ${request.lastUserText}`, delayMs: 300 };
      if (request.toolResults.length === 0) {
        return {
          toolCalls: [
            {
              name: 'spawn_agents',
              arguments: { tasks: [{ task: 'job now' }, { task: 'job later', run_in_background: true }] },
            },
          ],
        };
      }
      if (request.toolResults.length === 1) {
        return {
          toolCalls: [{ name: 'task_output', arguments: { agent_id: 'lead/spawn_agents#1.2:lead' } }],
        };
      }
      return { text: 'lead done' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const lead = fake.requests.filter((r) => !isWorker(r));
    expect(lead[0]?.toolNames).toEqual(['spawn_agents', 'task_output']);
    const [aggregate, collected] = lead.at(-1)?.toolResults ?? [];
    expect(JSON.parse(aggregate?.content ?? '{}')).toEqual({
      sub_agent_results: [
        {
          status: 'completed',
          agent_id: 'lead/spawn_agents#1.1:lead',
          task: 'job now',
          outcome: { success: { result: 'did job now' } },
        },
        {
          status: 'async_launched',
          agent_id: 'lead/spawn_agents#1.2:lead',
          task: 'job later',
          outcome: { async_launched: {} },
        },
      ],
    });
    expect(JSON.parse(collected?.content ?? '{}')).toMatchObject({
      status: 'completed',
      result: 'did job later',
    });
    const tree = (JSON.parse(result.stdout) as { agents: { status: string }[] }).agents;
    expect(tree.map((n) => n.status)).toEqual(['completed', 'completed']);
  });
});
