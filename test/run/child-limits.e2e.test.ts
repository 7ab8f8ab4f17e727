import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * Per-child limits: `[budget] max_tool_calls / max_turns / timeout` in a child's file,
 * `[sub_agents_config]` defaults in its caller's, the smaller wins, and a child that reaches one
 * stops cleanly with its answer so far while its siblings go on.
 */
const setup = e2eHomes();

interface Node {
  agent: string;
  status: string;
  tool_calls: number;
  turns: number;
}

/** A child that says how far it got and lists the directory again, every turn, forever. */
function busy(request: RecordedRequest): ScriptedReply {
  const done = request.toolResults.length;
  return {
    text: `progress ${done}`,
    toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }],
    usage: { input: 10, output: 5 },
  };
}

async function seed(leadConfig: string[], children: Record<string, string[]>) {
  const { home, fake } = await setup();
  const workdir = home.root;
  for (const [name, extra] of Object.entries(children)) {
    home.agent(
      name,
      agentToml(name, { extra: [`workdir = "${workdir}"`, 'tools = ["list_directory"]', ...extra] }),
    );
  }
  const names = Object.keys(children);
  home.agent('lead', agentToml('lead', { subAgents: names, subAgentsConfig: leadConfig }));
  fake.respond((request) => {
    const role = roleOf(request);
    if (role !== 'lead') return role === 'calm' ? { text: 'calm done' } : busy(request);
    return request.toolResults.length === 0
      ? { toolCalls: names.map((name) => callAgent(name, 'go')) }
      : { text: 'lead done' };
  });
  const run = async (args: string[] = []) => {
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', ...args],
      {
        env: home.env(fake.url),
      },
    );
    const envelope = result.code === 0 ? (JSON.parse(result.stdout) as { agents: Node[] }) : undefined;
    return { result, tree: envelope?.agents ?? [] };
  };
  const requestsOf = (role: string) => fake.requests.filter((r) => roleOf(r) === role);
  const resultsSeenByLead = () => requestsOf('lead').at(-1)?.toolResults ?? [];
  return { home, fake, run, requestsOf, resultsSeenByLead };
}

describe.concurrent('per-child limits', () => {
  it("max_tool_calls: the child's own limit and the caller's default, the smaller wins; siblings go on", async () => {
    const t = await seed(['max_tool_calls = 3'], {
      own: ['[budget]', 'max_tool_calls = 2'],
      capped: ['[budget]', 'max_tool_calls = 10'],
      calm: [],
    });
    const { result, tree } = await t.run();
    expect(result.code).toBe(0);
    expect(tree.map((n) => [n.agent, n.status, n.tool_calls])).toEqual([
      ['own', 'budget_exceeded', 2],
      ['capped', 'budget_exceeded', 3],
      ['calm', 'completed', 0],
    ]);
    // No model call after the limit: two tool turns, then the turn that asked for a third call.
    expect(t.requestsOf('own')).toHaveLength(3);
    expect(t.requestsOf('capped')).toHaveLength(4);
    // Go's text contract, plus one line: not an error, the answer so far.
    expect(t.resultsSeenByLead().map((r) => [r.content, r.isError === true])).toEqual([
      ['progress 2\n\n[stopped: budget exceeded — 2 of 2 tool calls]', false],
      ['progress 3\n\n[stopped: budget exceeded — 3 of 3 tool calls]', false],
      ['calm done', false],
    ]);
  });

  it('max_tool_calls: a turn that asks for more calls than are left runs those left; the rest are refused', async () => {
    const { home, fake } = await setup();
    home.agent(
      'solo',
      agentToml('solo', {
        extra: [`workdir = "${home.root}"`, 'tools = ["list_directory"]', '[budget]', 'max_tool_calls = 2'],
      }),
    );
    const list = { name: 'list_directory', arguments: { path: '.' } };
    fake.respond(() => ({ text: 'listing', toolCalls: [list, list, list] }));
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(4);
    const details = (
      JSON.parse(result.stdout) as { tool_call_details: { output: string; is_error: boolean }[] }
    ).tool_call_details;
    expect(details.map((d) => [d.is_error, d.output.startsWith('not run')])).toEqual([
      [false, false],
      [false, false],
      [true, true],
    ]);
    expect(details[2]?.output).toBe('not run: the tool-call budget is spent');
  });

  it('max_turns in [budget] ends the child with its answer so far (status max_turns), not an error', async () => {
    const t = await seed(['max_turns = 2', 'result_format = "json"'], { looper: [] });
    const { result, tree } = await t.run();
    expect(result.code).toBe(0);
    expect(tree[0]).toMatchObject({ status: 'max_turns', turns: 2 });
    expect(t.requestsOf('looper')).toHaveLength(2);
    const outcome = JSON.parse(t.resultsSeenByLead()[0]?.content ?? '{}') as Record<string, unknown>;
    expect(outcome).toMatchObject({
      status: 'max_turns',
      result: 'progress 1',
      error: 'turn limit — 2 of 2 turns',
    });
  });

  it("the caller's max_tokens caps a child's tokens: no model call once they are spent", async () => {
    const t = await seed(['max_tokens = 20'], { spender: [] });
    const { result, tree } = await t.run();
    expect(result.code).toBe(0);
    // 15 tokens a call: the second call reaches 30 >= 20, so no third one starts.
    expect(t.requestsOf('spender')).toHaveLength(2);
    expect(tree[0]).toMatchObject({ status: 'budget_exceeded' });
    expect(t.resultsSeenByLead()[0]?.content).toBe(
      'progress 1\n\n[stopped: budget exceeded — 30 of 20 tokens]',
    );
  });

  it("[budget] timeout: the child's own deadline, the smaller of it and the caller's", async () => {
    const { home, fake } = await setup();
    home.agent('slow', agentToml('slow', { extra: ['[budget]', 'timeout = 1'] }));
    home.agent('lead', agentToml('lead', { subAgents: ['slow'], subAgentsConfig: ['timeout = 60'] }));
    fake.respond((request) =>
      roleOf(request) === 'slow'
        ? { text: 'late', delayMs: 20_000 }
        : request.toolResults.length === 0
          ? { toolCalls: [callAgent('slow', 'x')] }
          : { text: 'lead done' },
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { agents: Node[] }).agents[0]?.status).toBe('timeout');
    // It gave up on the request, 20 s from its answer: the server saw it leave.
    expect(fake.requests.filter((r) => roleOf(r) === 'slow').map((r) => r.aborted)).toEqual([true]);

    // At the top level it bounds the run too, and --dry-run says so.
    const dry = await runAxe(['run', 'slow', '--agents-dir', home.agentsDir, '--dry-run'], {
      env: home.env(fake.url),
    });
    expect(dry.stdout).toContain('\nTimeout:  1s\n');
  });

  it("a parent's max_tool_calls counts its own calls: a child's calls neither count nor are cut by it", async () => {
    const { home, fake } = await setup();
    const workdir = home.root;
    home.agent(
      'worker',
      agentToml('worker', { extra: [`workdir = "${workdir}"`, 'tools = ["list_directory"]'] }),
    );
    home.agent(
      'lead',
      agentToml('lead', {
        extra: [
          `workdir = "${workdir}"`,
          'tools = ["list_directory"]',
          'sub_agents = ["worker"]',
          '[budget]',
          'max_tool_calls = 2',
        ],
      }),
    );
    const list = { name: 'list_directory', arguments: { path: '.' } };
    fake.respond((request) => {
      const done = request.toolResults.length;
      if (roleOf(request) === 'worker') return done < 3 ? { toolCalls: [list] } : { text: 'worker done' };
      // The lead: one call_agent, then one list_directory (its two calls), then its answer.
      return done === 0
        ? { toolCalls: [callAgent('worker', 'list thrice')] }
        : done === 1
          ? { toolCalls: [list] }
          : { text: 'lead done' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout) as { content: string; tool_calls: number; agents: Node[] };
    expect(envelope.content).toBe('lead done');
    expect(envelope.tool_calls).toBe(2);
    expect(envelope.agents.map((n) => [n.agent, n.status, n.tool_calls])).toEqual([
      ['worker', 'completed', 3],
    ]);
  });

  it("delegated work without limits gets the defaults (15 tool calls); a task's max_tool_calls and [sub_agents_config] override them; --dry-run shows them", async () => {
    const { home, fake } = await setup();
    const lead = (config: string[]) =>
      home.agent(
        'lead',
        agentToml('lead', {
          extra: [`workdir = "${home.root}"`, 'tools = ["list_directory"]'],
          subAgentsConfig: ['spawn = true', 'delegate = true', ...config],
        }),
      );
    lead([]);
    const isWorker = (r: RecordedRequest) => r.lastUserText.includes('job ');
    const calls = [
      {
        name: 'spawn_agents',
        arguments: { tasks: [{ task: 'job plain' }, { task: 'job wide', max_tool_calls: 20 }] },
      },
      {
        name: 'delegate_task',
        arguments: { plan: 'p', subtasks: [{ task: 'job step' }, { task: 'job short', max_tool_calls: 2 }] },
      },
    ];
    fake.respond((request) => {
      if (isWorker(request)) return busy(request);
      const call = calls[request.toolResults.length];
      return call ? { toolCalls: [call] } : { text: 'lead done' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const tree = (JSON.parse(result.stdout) as { agents: Node[] }).agents;
    expect(tree.map((n) => [n.status, n.tool_calls])).toEqual([
      ['budget_exceeded', 15],
      ['budget_exceeded', 20],
      ['budget_exceeded', 15],
      ['budget_exceeded', 2],
    ]);
    const dry = async () =>
      (
        await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '--dry-run'], {
          env: home.env(fake.url),
        })
      ).stdout;
    expect(await dry()).toContain(
      '--- Delegated Work ---\nspawn_agents, delegate_task\nEach child without limits of its own or from the call: 15 tool calls, 200000 tokens, 300s\n',
    );
    lead(['max_tool_calls = 4', 'timeout = 30']);
    expect(await dry()).toContain(
      'Each child without limits of its own or from the call: 4 tool calls, 200000 tokens, 30s\n',
    );
  });

  it('at the top level an own limit is a non-zero exit: 4 for tool calls; nonsense limits are refused at load', async () => {
    const { home, fake } = await setup();
    home.agent(
      'solo',
      agentToml('solo', {
        extra: [`workdir = "${home.root}"`, 'tools = ["list_directory"]', '[budget]', 'max_tool_calls = 1'],
      }),
    );
    fake.respond(busy);
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'];
    const result = await runAxe(args, { env: home.env(fake.url) });
    expect(result).toMatchObject({
      code: 4,
      stdout: 'progress 1',
      stderr: 'axe: budget exceeded — 1 of 1 tool calls\n',
    });
    home.agent('bad', agentToml('bad', { extra: ['[budget]', 'max_tool_calls = 0'] }));
    const bad = await runAxe(['run', 'bad', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/bad\.toml:\d+:\d+: budget\.max_tool_calls: must be >= 1 \(got 0\)/);
  });
});
