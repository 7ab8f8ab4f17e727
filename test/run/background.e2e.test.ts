import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe, startAxe, waitFor } from './cli.js';

/**
 * Background children: `run_in_background` returns at once, `task_output` polls or blocks, the
 * agent is reminded of what it has not collected, and nothing outlives it.
 */
const setup = e2eHomes();

interface Node {
  agent: string;
  status: string;
}

const launch = (task: string) => ({
  name: 'call_agent',
  arguments: { agent: 'slow', task, run_in_background: true },
});

async function seed(lead: (r: RecordedRequest) => ScriptedReply, slowMs: number) {
  const { home, fake } = await setup();
  home.agent('slow', agentToml('slow'));
  home.agent('lead', agentToml('lead', { subAgents: ['slow'], subAgentsConfig: ['background = true'] }));
  fake.respond((request) =>
    roleOf(request) === 'slow' ? { text: `slow: ${request.lastUserText}`, delayMs: slowMs } : lead(request),
  );
  return { home, fake };
}

const ID = 'lead/call_agent#1:slow';

/** One turn with a background child and a foreground one: both are `slow`. */
const LAUNCH_AND_CALL: ScriptedReply = {
  toolCalls: [launch('long'), { name: 'call_agent', arguments: { agent: 'slow', task: 'in front' } }],
};

describe.concurrent('background sub-agents', () => {
  it('launch, poll (running), block (the result), unknown id', async () => {
    const { home, fake } = await seed((r) => {
      switch (r.toolResults.length) {
        case 0:
          return { toolCalls: [launch('bg')] };
        case 1:
          return { toolCalls: [{ name: 'task_output', arguments: { agent_id: ID, block: false } }] };
        case 2:
          return {
            toolCalls: [
              { name: 'task_output', arguments: { agent_id: ID } },
              { name: 'task_output', arguments: { agent_id: 'nope' } },
            ],
          };
        default:
          return { text: 'lead done' };
      }
    }, 600);
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
    expect(lead[0]?.toolNames).toEqual(['call_agent', 'task_output']);
    const results = lead.at(-1)?.toolResults ?? [];
    expect(JSON.parse(results[0]?.content ?? '{}')).toEqual({ status: 'async_launched', agent_id: ID });
    expect(JSON.parse(results[1]?.content ?? '{}')).toEqual({ status: 'running', agent_id: ID });
    expect(JSON.parse(results[2]?.content ?? '{}')).toMatchObject({
      status: 'completed',
      result: 'slow: Task: bg',
      agent_id: ID,
    });
    expect(results[3]).toMatchObject({
      isError: true,
      content: 'task_output error: no background sub-agent with agent_id "nope"',
    });
    const tree = (JSON.parse(result.stdout) as { agents: Node[] }).agents;
    expect(tree.map((n) => `${n.agent}:${n.status}`)).toEqual(['slow:completed']);
  });

  it('task_output reads block and timeout as its schema says: "false" polls, any other value is an error naming it', async () => {
    const { home, fake } = await seed((r) => {
      switch (r.toolResults.length) {
        case 0:
          return { toolCalls: [launch('bg')] };
        case 1:
          return {
            toolCalls: [
              { name: 'task_output', arguments: { agent_id: ID, block: 'false' } },
              { name: 'task_output', arguments: { agent_id: ID, block: 'nope' } },
              { name: 'task_output', arguments: { agent_id: ID, block: true, timeout: 'soon' } },
            ],
          };
        default:
          return { text: 'lead done' };
      }
    }, 20_000);
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const results = fake.requests.filter((r) => roleOf(r) === 'lead')[2]?.toolResults ?? [];
    expect(JSON.parse(results[1]?.content ?? '{}')).toEqual({ status: 'running', agent_id: ID });
    expect(results.slice(2)).toMatchObject([
      { isError: true, content: 'task_output error: "block" must be a boolean, got "nope"' },
      { isError: true, content: 'task_output error: "timeout" must be an integer, got "soon"' },
    ]);
  });

  it('an answer with a child still running gets one reminder turn; then the child is cancelled', async () => {
    // The lead answers after 300 ms: under load the child's request could otherwise come after
    // the lead had finished and cancelled it, leaving no request to see closed.
    const { home, fake } = await seed(
      (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [launch('forgotten')] }
          : { text: 'lead done', delayMs: 300 },
      20_000,
    );
    // The child answers only after 20 s: a lead that waited for it would see it completed, not
    // cancelled (checked below).
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
    expect(lead).toHaveLength(3);
    expect(lead[2]?.lastUserText).toBe(
      `Before you finish: background sub-agents you started have not been collected:\n- ${ID} (task: forgotten): still running\nRead their results with task_output, or answer again; sub-agents still running after your next answer are cancelled.`,
    );
    expect(result.stderr).toContain(
      `background sub-agent ${ID} (task: forgotten) was still running when "lead" finished: cancelled`,
    );
    const tree = (JSON.parse(result.stdout) as { agents: Node[] }).agents;
    expect(tree.map((n) => `${n.agent}:${n.status}`)).toEqual(['slow:cancelled']);
    const child = fake.requests.find((r) => roleOf(r) === 'slow');
    await waitFor(() => child?.aborted === true);
  });

  it('a submit_result with children uncollected gets the reminder turn too; the submission stands', async () => {
    const { home, fake } = await setup();
    home.agent('slow', agentToml('slow'));
    home.agent(
      'lead',
      // `[output]` last: a table takes the keys after it.
      agentToml('lead', { subAgents: ['slow'], subAgentsConfig: ['background = true', '', '[output]'] }),
    );
    fake.respond((request) => {
      if (roleOf(request) === 'slow') {
        return {
          text: `slow: ${request.lastUserText}`,
          delayMs: request.lastUserText.includes('long') ? 20_000 : 0,
        };
      }
      if (request.toolResults.length === 0) return { toolCalls: [launch('fast one'), launch('long one')] };
      if (request.lastUserText.startsWith('Before you finish')) return { text: 'nothing to add' };
      return { toolCalls: [{ name: 'submit_result', arguments: { result: 'first' } }], delayMs: 500 };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: '"first"\n' });
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
    expect(lead).toHaveLength(3);
    expect(lead[2]?.lastUserText).toContain(
      '- lead/call_agent#1:slow (task: fast one): completed, result not read',
    );
    expect(lead[2]?.lastUserText).toContain('- lead/call_agent#2:slow (task: long one): still running');
    expect(result.stderr).toContain(
      'background sub-agent lead/call_agent#2:slow (task: long one) was still running',
    );
  });

  it('the token budget that stops the agent stops its background children as budget_exceeded', async () => {
    const { home, fake } = await seed(
      (r) =>
        r.toolResults.length === 0
          ? { toolCalls: [launch('long')] }
          : {
              toolCalls: [{ name: 'task_output', arguments: { agent_id: ID, block: false } }],
              usage: { input: 25_000, output: 10 },
            },
      20_000,
    );
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--max-tokens', '20000'],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(4);
    const tree = (JSON.parse(result.stdout) as { agents: Node[] }).agents;
    expect(tree.map((n) => `${n.agent}:${n.status}`)).toEqual(['slow:budget_exceeded']);
    expect(result.stderr).toContain(
      `background sub-agent ${ID} (task: long) was still running when "lead" stopped: budget exceeded`,
    );
  });

  it('Ctrl-C with background and foreground children running: exit 130 at once, every request closed', async () => {
    const { home, fake } = await seed(
      (r) =>
        r.toolResults.length === 0
          ? LAUNCH_AND_CALL
          : { toolCalls: [{ name: 'task_output', arguments: { agent_id: ID } }] },
      30_000,
    );
    const running = startAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    await waitFor(() => fake.requests.filter((r) => roleOf(r) === 'slow').length === 2);
    running.kill('SIGINT');
    const result = await running.done;
    expect(result.code).toBe(130);
    // It did not wait for the children's answers (30 s away): the server saw every request left.
    await waitFor(() => fake.requests.filter((r) => roleOf(r) === 'slow').every((r) => r.aborted));
    expect(
      fake.requests
        .filter((r) => roleOf(r) === 'slow')
        .map((r) => r.lastUserText)
        .sort(),
    ).toEqual(['Task: in front', 'Task: long']);
  });

  it('the run deadline with background and foreground children running: exit 3 on time, every request closed', async () => {
    const { home, fake } = await seed(
      (r) => (r.toolResults.length === 0 ? LAUNCH_AND_CALL : { text: 'never' }),
      30_000,
    );
    // The children answer in 30 s: the run ends by its deadline, long enough for a busy machine to
    // start both children first.
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--timeout', '8'],
      {
        env: home.env(fake.url),
      },
    );
    expect(result.code).toBe(3);
    const children = fake.requests.filter((r) => roleOf(r) === 'slow');
    expect(children).toHaveLength(2);
    await waitFor(() => children.every((r) => r.aborted));
  });
});
