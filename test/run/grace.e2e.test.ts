import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, Responder } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `[budget] grace_period`: a sub-agent stopped by its timeout or turn limit gets one last turn,
 * with the grace message and only submit_result (or no tool), under a deadline its caller's bounds.
 */
const setup = e2eHomes();

interface Node {
  agent: string;
  status: string;
  output?: unknown;
  children?: Node[];
}

const isGrace = (request: RecordedRequest) => request.lastUserText.includes('one final chance');

/** A worker with read_file, one turn, 5 s of grace and a checked `{ n: integer }` output. */
const TURN_LIMITED_OUTPUT_AGENT = [
  'tools = ["read_file"]',
  '[budget]',
  'max_turns = 1',
  'grace_period = 5',
  '[output]',
  'schema = { type = "object", properties = { n = { type = "integer" } }, required = ["n"] }',
];

async function seed(child: string[], respond: Responder, runArgs: string[] = []) {
  const { home, fake } = await setup();
  const work = home.file('work/notes.txt', 'x');
  home.agent('worker', agentToml('worker', { extra: [`workdir = "${path.dirname(work)}"`, ...child] }));
  home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
  fake.respond((request) => {
    if (roleOf(request) === 'lead') {
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('worker', 'work')] }
        : { text: `lead got: ${request.toolResults[0]?.content}` };
    }
    return respond(request);
  });
  const result = await runAxe(
    ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', ...runArgs],
    { env: home.env(fake.url) },
  );
  const worker = fake.requests.filter((r) => roleOf(r) === 'worker');
  const envelope = result.stdout === '' ? undefined : (JSON.parse(result.stdout) as { agents: Node[] });
  return { result, worker, tree: envelope?.agents[0] };
}

describe.concurrent('grace turn', () => {
  it('a child that times out and answers in the grace turn completes, with no tools offered', async () => {
    const { result, worker, tree } = await seed(
      ['tools = ["read_file"]', '[budget]', 'timeout = 1', 'grace_period = 5'],
      (request) =>
        isGrace(request)
          ? { text: 'best so far' }
          : request.toolResults.length === 0
            ? { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }
            : { text: 'never', delayMs: 4000 },
    );
    expect(result.code).toBe(0);
    expect(tree).toMatchObject({ agent: 'worker', status: 'completed' });
    const grace = worker.at(-1);
    expect(worker).toHaveLength(3);
    expect(grace?.lastUserText).toBe(
      '[read_file returned]\n1: x\n\n' +
        'You have exceeded the time limit. You have one final chance to complete the task.\n' +
        'Give your final answer now, as plain text.\nDo not call any tools.',
    );
    // No tools: the read_file call and its result are told as text (Anthropic refuses tool blocks then).
    expect(grace?.toolNames).toEqual([]);
    expect(JSON.stringify(grace?.body)).toContain('[called read_file {\\"path\\":\\"notes.txt\\"}]');
    expect(grace?.rejection).toBeUndefined();
    expect(JSON.parse(result.stdout).content).toBe('lead got: best so far');
  });

  it('one that stays silent keeps timeout and its answer so far; grace_period 0 gives no grace turn', async () => {
    const silent = await seed(['[budget]', 'timeout = 1', 'grace_period = 1'], () => ({
      text: 'never',
      delayMs: 4000,
    }));
    expect(silent.tree?.status).toBe('timeout');
    expect(silent.worker.map(isGrace)).toEqual([false, true]);

    const off = await seed(['[budget]', 'timeout = 1'], () => ({ text: 'never', delayMs: 4000 }));
    expect(off.tree?.status).toBe('timeout');
    expect(off.worker.map(isGrace)).toEqual([false]);
  });

  it('the grace turn never outlives the caller: the run ends at its own --timeout', async () => {
    // The grace turn's answer is 20 s away and its grace 60 s: only the run's --timeout ends it.
    const { result, worker } = await seed(
      ['[budget]', 'timeout = 1', 'grace_period = 60'],
      () => ({ text: 'never', delayMs: 20_000 }),
      ['--timeout', '3'],
    );
    expect(result.code).toBe(3);
    expect(worker.map(isGrace)).toEqual([false, true]);
    expect(worker[1]?.aborted).toBe(true);
  });

  it('at max_turns an [output] agent is offered only submit_result, and a valid one completes it', async () => {
    const { result, worker, tree } = await seed(TURN_LIMITED_OUTPUT_AGENT, (request) =>
      isGrace(request)
        ? { toolCalls: [{ name: 'submit_result', arguments: { result: { n: 7 } } }] }
        : { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
    );
    expect(result.code).toBe(0);
    expect(tree).toMatchObject({ status: 'completed', output: { n: 7 } });
    expect(worker[0]?.toolNames).toEqual(['read_file', 'submit_result', 'submit_error']);
    expect(worker[1]?.toolNames).toEqual(['submit_result']);
    expect(worker[1]?.lastUserText).toContain(
      'You have reached the maximum number of turns. You have one final chance to complete the task.\n' +
        'You MUST call `submit_result` immediately with your best answer.',
    );
  });

  it('a grace submission that fails the schema keeps max_turns', async () => {
    const { tree, worker } = await seed(TURN_LIMITED_OUTPUT_AGENT, (request) =>
      isGrace(request)
        ? { toolCalls: [{ name: 'submit_result', arguments: { result: { n: 'seven' } } }] }
        : { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] },
    );
    expect(tree?.status).toBe('max_turns');
    expect(tree?.output).toBeUndefined();
    expect(worker).toHaveLength(2);
  });
});
