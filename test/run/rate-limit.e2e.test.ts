import { describe, expect, it } from 'vitest';
import type { RateLimitOptions } from '../fake-llm/rate-limit.js';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml } from './agents.js';
import { type AxeResult, e2eHomes, runAxe } from './cli.js';

/**
 * The providers' rate gate (internal/ratelimit/): 20 children of one run, each a tool loop of
 * several turns, against a server that takes 50 requests a second and answers 429 beyond that.
 * A 429 holds back every child's requests until its `retry-after`, and the server's rate-limit
 * headers slow them down before they are refused: all complete, with few 429s.
 */
const WORKERS = 20;
const TURNS = 12;

function assistantTurns(request: RecordedRequest): number {
  const messages = (request.body as { messages?: { role: string }[] }).messages ?? [];
  return messages.filter((message) => message.role === 'assistant').length;
}

async function fanOutAgainst(rateLimit: RateLimitOptions) {
  const { home, fake } = await e2eHomes({ rateLimit })();
  home.file('work/notes.txt', 'a note');
  home.agent(
    'lead',
    agentToml('lead', {
      extra: [`workdir = "${home.root}/work"`, 'tools = ["list_directory"]', '[retry]', 'max_retries = 10'],
      subAgentsConfig: ['spawn = true', `max_spawn = ${WORKERS}`, `max_parallel = ${WORKERS}`],
    }),
  );
  const tasks = Array.from({ length: WORKERS }, (_, i) => ({ task: `job ${i}` }));
  fake.respond((request) => {
    const turns = assistantTurns(request);
    if (request.lastUserText === 'go' && turns === 0) {
      return { toolCalls: [{ name: 'spawn_agents', arguments: { tasks } }] };
    }
    const first = (request.body as { messages: { content: unknown }[] }).messages[0]?.content;
    if (!JSON.stringify(first).includes('job ')) return { text: 'lead done' };
    return turns < TURNS - 1
      ? { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] }
      : { text: 'worker done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
    env: home.env(fake.url),
  });
  const throttled = fake.requests.filter((request) => request.throttled).length;
  return { result, throttled, total: fake.requests.length };
}

function expectAllCompleted(result: AxeResult): void {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const envelope = JSON.parse(result.stdout) as { agents: { status: string }[] };
  expect(envelope.agents).toHaveLength(WORKERS);
  expect(envelope.agents.every((agent) => agent.status === 'completed')).toBe(true);
}

describe.concurrent('the rate gate against a rate-limited server', () => {
  it('with the rate-limit headers, 20 parallel children all complete with at most 5% of requests refused', async () => {
    const { result, throttled, total } = await fanOutAgainst({ perSecond: 50, headers: 'anthropic' });
    expectAllCompleted(result);
    // Every worker's turns and the lead's two, plus the refused ones.
    expect(total - throttled).toBe(WORKERS * TURNS + 2);
    expect(throttled / total).toBeLessThanOrEqual(0.05);
  });

  it('with 429 and retry-after alone, every refused request waits and all complete', async () => {
    const { result, throttled, total } = await fanOutAgainst({ perSecond: 50 });
    expectAllCompleted(result);
    expect(total - throttled).toBe(WORKERS * TURNS + 2);
    // The server refused some (nothing said its limit before), each then sent again.
    expect(throttled).toBeGreaterThan(0);
  });
});
