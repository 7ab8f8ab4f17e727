import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * One outcome per agent run: every status from a real scenario, the files a child read and
 * changed from its real tool calls, in `--json`'s tree, in `--verbose`, and in both result formats.
 */
const setup = e2eHomes();

interface Node {
  agent: string;
  status: string;
  turns: number;
  tool_calls: number;
  files_read: string[];
  files_modified: string[];
  error?: string;
}

/** worker: reads notes.txt, writes out.txt, fails an edit, answers; looper: calls tools forever; sleeper: too slow. */
function script(request: RecordedRequest): ScriptedReply {
  const role = roleOf(request);
  if (role === 'lead') {
    return request.toolResults.length === 0
      ? {
          toolCalls: [
            callAgent('worker', 'work'),
            callAgent('looper', 'loop'),
            callAgent('sleeper', 'sleep'),
            callAgent('ghost', 'haunt'),
          ],
        }
      : { text: 'lead done' };
  }
  if (role === 'worker') {
    const turn = request.toolResults.length;
    if (turn === 0) return { toolCalls: [{ name: 'read_file', arguments: { path: './notes.txt' } }] };
    if (turn === 1)
      return {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'out.txt', content: 'x' } },
          { name: 'edit_file', arguments: { path: 'missing.txt', old_string: 'a', new_string: 'b' } },
        ],
      };
    return { text: 'worker done', usage: { input: 7, output: 3 } };
  }
  if (role === 'looper') return { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] };
  // Long past the sleeper's own 1 s deadline: only that deadline ends it.
  return { text: 'too late', delayMs: 20_000 };
}

async function seed() {
  const { home, fake } = await setup();
  const work = home.file('work/notes.txt', 'remember the milk');
  const workdir = path.dirname(work);
  const child = (name: string, extra: string[]) =>
    home.agent(name, agentToml(name, { extra: [`workdir = "${workdir}"`, ...extra] }));
  child('worker', ['tools = ["read_file", "write_file", "edit_file"]']);
  child('looper', ['tools = ["list_directory"]', 'max_turns = 2']);
  // Only the sleeper has a deadline: on a busy machine the others may take more than a second.
  child('sleeper', ['[budget]', 'timeout = 1']);
  fake.respond(script);
  const lead = (format: string) =>
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['worker', 'looper', 'sleeper', 'ghost'],
        subAgentsConfig: format === '' ? undefined : [`result_format = "${format}"`],
      }),
    );
  const run = (args: string[]) =>
    runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', ...args], { env: home.env(fake.url) });
  return { home, fake, workdir, lead, run };
}

describe.concurrent('agent outcomes', () => {
  it("each status in --json's tree and --verbose; files from real tool calls; Go's text results", async () => {
    const { fake, workdir, lead, run } = await seed();
    lead('');
    const result = await run(['--json']);
    expect(result.code).toBe(0);
    const tree = (JSON.parse(result.stdout) as { agents: Node[] }).agents;
    expect(tree.map((n) => `${n.agent}:${n.status}`)).toEqual([
      'worker:completed',
      'looper:max_turns',
      'sleeper:timeout',
      'ghost:error',
    ]);
    expect(tree[0]).toMatchObject({
      turns: 3,
      tool_calls: 3,
      files_read: ['notes.txt'],
      files_modified: ['out.txt'],
    });
    expect(readFileSync(path.join(workdir, 'out.txt'), 'utf8')).toBe('x');
    expect(tree[1]).toMatchObject({ turns: 2, error: 'agent exceeded maximum conversation turns (2)' });
    // Go's contract: the answer, or the spec's error sentence.
    const results = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1)?.toolResults ?? [];
    expect(results.map((r) => r.content)).toEqual([
      'worker done',
      'Error: sub-agent "looper" failed - agent exceeded maximum conversation turns (2). You may retry or proceed without this result.',
      expect.stringMatching(/^Error: sub-agent "sleeper" failed - timeout after 1s/),
      expect.stringMatching(/^call_agent error: failed to load agent "ghost"/),
    ]);
    const leadTools = fake.requests.find((r) => roleOf(r) === 'lead')?.body as {
      tools: { description: string }[];
    };
    expect(leadTools.tools[0]?.description).not.toContain('JSON object');

    const verbose = await run(['--verbose']);
    expect(verbose.stderr).toMatch(/^\[sub-agent\] "worker" completed in \d+ms \(11 chars returned\)$/m);
    expect(verbose.stderr).toMatch(
      /^\[sub-agent\] "looper" failed: agent exceeded maximum conversation turns \(2\)$/m,
    );
  });

  it('result_format = "json": one object per call, an error unless completed or stopped with partial work, described in the tool', async () => {
    const { fake, lead, run } = await seed();
    lead('json');
    const result = await run([]);
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const leadRequests = fake.requests.filter((r) => roleOf(r) === 'lead');
    const tool = (leadRequests[0]?.body as { tools: { description: string }[] } | undefined)?.tools[0];
    expect(tool?.description).toContain('Each result is a JSON object: status (completed, budget_exceeded');
    const results = leadRequests.at(-1)?.toolResults ?? [];
    const outcomes = results.map((r) => JSON.parse(r.content) as Record<string, unknown>);
    expect(outcomes[0]).toEqual({
      status: 'completed',
      result: 'worker done',
      agent_id: 'lead/call_agent#1:worker',
      turns_used: 3,
      tool_calls: 3,
      total_tokens: 10 + 5 + 10 + 5 + 7 + 3,
      duration_seconds: expect.any(Number),
      files_read: ['notes.txt'],
      files_modified: ['out.txt'],
    });
    expect(outcomes.slice(1).map((o) => [o.status, typeof o.error])).toEqual([
      ['max_turns', 'string'],
      ['timeout', 'string'],
      ['error', 'string'],
    ]);
    // The looper's turn limit stopped it after two calls: partial work, not an error.
    expect(results.map((r) => r.isError === true)).toEqual([false, false, true, true]);
  });

  it('spawn_agents, delegate_task and background results lead with the status; a stopped child shows its partial work, counts and files', async () => {
    const { home, fake } = await setup();
    const notes = home.file('work/notes.txt', 'remember the milk');
    home.agent(
      'lead',
      agentToml('lead', {
        extra: [`workdir = "${path.dirname(notes)}"`, 'tools = ["read_file", "list_directory"]'],
        subAgentsConfig: ['spawn = true', 'delegate = true', 'background = true', 'max_tool_calls = 2'],
      }),
    );
    // Every worker (task "dig"): reads notes.txt, then lists the directory forever, saying how far it got.
    const isWorker = (r: RecordedRequest) => r.lastUserText.includes('dig');
    fake.respond((request) => {
      const done = request.toolResults.length;
      if (isWorker(request))
        return {
          text: `progress ${done}`,
          toolCalls: [
            done === 0
              ? { name: 'read_file', arguments: { path: 'notes.txt' } }
              : { name: 'list_directory', arguments: { path: '.' } },
          ],
        };
      const calls = [
        { name: 'delegate_task', arguments: { plan: 'p', subtasks: [{ task: 'dig' }] } },
        {
          name: 'spawn_agents',
          arguments: { tasks: [{ task: 'dig' }, { task: 'dig', run_in_background: true }] },
        },
        { name: 'task_output', arguments: { agent_id: 'lead/spawn_agents#1.2:lead' } },
      ];
      const call = calls[done];
      return call ? { toolCalls: [call] } : { text: 'lead done' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const [delegated, spawned, collected] =
      fake.requests.filter((r) => !isWorker(r)).at(-1)?.toolResults ?? [];
    const stopped = 'budget_exceeded (budget exceeded — 2 of 2 tool calls)';
    expect(delegated?.content).toBe(
      [
        'Status: 0 of 1 sub-tasks completed (1 budget_exceeded)',
        'Plan: p',
        `## Sub-task 0: dig\nStatus: ${stopped}\nTurns: 3, tool calls: 2\nFiles read: notes.txt`,
        'Partial work:\nprogress 2',
      ].join('\n\n'),
    );
    expect(delegated?.isError).toBe(false);
    const entries = (JSON.parse(spawned?.content ?? '{}') as { sub_agent_results: object[] })
      .sub_agent_results;
    expect(entries[0]).toEqual({
      status: 'budget_exceeded',
      agent_id: 'lead/spawn_agents#1.1:lead',
      task: 'dig',
      outcome: { failure: { error: 'budget exceeded — 2 of 2 tool calls', error_kind: 'budget_exceeded' } },
      partial_result: 'progress 2',
      turns: 3,
      tool_calls: 2,
      files_read: ['notes.txt'],
      files_modified: [],
    });
    expect(spawned?.isError).toBe(false);
    expect(Object.keys(JSON.parse(collected?.content ?? '{}') as object)[0]).toBe('status');
    expect(JSON.parse(collected?.content ?? '{}')).toMatchObject({
      status: 'budget_exceeded',
      result: 'progress 2',
      tool_calls: 2,
      files_read: ['notes.txt'],
    });
    expect(collected?.isError).toBe(false);
  });

  it("call_agent from a Markdown caller leads with the outcome; a TOML caller keeps Go's text", async () => {
    const { home, fake, run } = await seed();
    home.file(
      'agents/lead.md',
      '---\nname: lead\ndescription: Leads\nmodel: anthropic/claude-test\nsub_agents: [worker, looper, sleeper, ghost]\n---\nROLE:lead\n',
    );
    const result = await run([]);
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const results = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1)?.toolResults ?? [];
    expect(results.map((r) => [r.content.split('\n')[0], r.isError === true])).toEqual([
      ['worker done', false],
      ['Status: max_turns (agent exceeded maximum conversation turns (2))', false],
      ['Status: timeout (timeout after 1s)', true],
      [expect.stringMatching(/^call_agent error: failed to load agent "ghost"/), true],
    ]);
    expect(results[1]?.content).toBe(
      'Status: max_turns (agent exceeded maximum conversation turns (2))\nTurns: 2, tool calls: 1',
    );
  });
});
