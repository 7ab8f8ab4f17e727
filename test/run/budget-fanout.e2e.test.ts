import { describe, expect, it } from 'vitest';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentToml, allArrived, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe, type TempHome } from './cli.js';

/** The token budget under a wide parallel fan-out: reserved before each call, so it holds. */
const setup = e2eHomes();

const CHILD_TOKENS = 15; // the fake's default usage: 10 in, 5 out
const LEAD_TOKENS = 25;

interface AgentNode {
  status: string;
}

/**
 * `lead` calls `w` `children` times in one turn (`max_parallel = 64` unless `config` says
 * otherwise); each child answers after `childMs`, or once `held` lets it. Returns the most children
 * the server saw at once.
 */
function fanOut(
  home: TempHome,
  fake: FakeLlm,
  children: number,
  childMs: number | (() => Promise<void>),
  config = ['max_parallel = 64'],
): () => number {
  home.agent('lead', agentToml('lead', { subAgents: ['w'], subAgentsConfig: config }));
  home.agent('w', agentToml('w'));
  let inFlight = 0;
  let maxInFlight = 0;
  fake.respond(async (request) => {
    if (roleOf(request) === 'lead') {
      return request.toolResults.length === 0
        ? {
            toolCalls: Array.from({ length: children }, (_, i) => callAgent('w', `task ${i}`)),
            usage: { input: 20, output: 5 },
          }
        : { text: 'merged' };
    }
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await (typeof childMs === 'number' ? new Promise((resolve) => setTimeout(resolve, childMs)) : childMs());
    inFlight--;
    return { text: 'child answer' };
  });
  return () => maxInFlight;
}

describe('budget under a wide fan-out', () => {
  it('200 children, 100 tokens: overrun by no more than the calls in flight; every stopped child reports budget', async () => {
    const { home, fake } = await setup();
    const maxInFlight = fanOut(home, fake, 200, 20);
    const limit = 100;
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--max-tokens', String(limit)],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(4);
    expect(result.stderr).not.toMatch(/MaxListeners|memory leak/i);
    const envelope = JSON.parse(result.stdout) as { budget_used_tokens: number; agents: AgentNode[] };
    const childCalls = fake.requests.filter((request) => roleOf(request) === 'w').length;
    // Every call that started was paid for; the overrun is at most the calls in flight at the line.
    expect(envelope.budget_used_tokens).toBe(LEAD_TOKENS + childCalls * CHILD_TOKENS);
    expect(envelope.budget_used_tokens - limit).toBeLessThanOrEqual(maxInFlight() * CHILD_TOKENS);
    const statuses = envelope.agents.map((agent) => agent.status);
    expect(statuses).toHaveLength(200);
    expect(statuses.filter((status) => status === 'completed')).toHaveLength(childCalls);
    expect(statuses.filter((status) => status === 'budget_exceeded')).toHaveLength(200 - childCalls);
  });

  it('a budget far from its limit keeps the fan-out parallel', async () => {
    const { home, fake } = await setup();
    // No child is answered before all 64 are in flight.
    const all = allArrived(64);
    const maxInFlight = fanOut(home, fake, 64, () => all.arrive());
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--max-tokens', '10000000'],
      { env: home.env(fake.url) },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'merged', stderr: '' });
    expect(maxInFlight()).toBe(64);
  });

  it('the default run-wide limit is 64: a 70-call turn starts 64 at once and queues the rest', async () => {
    const { home, fake } = await setup();
    // The first 64 are answered only once all 64 are in; the 6 queued ones, at once.
    const first = allArrived(64);
    let arrived = 0;
    const held = () => (++arrived <= 64 ? first.arrive() : Promise.resolve());
    const maxInFlight = fanOut(home, fake, 70, held, ['parallel = true']);
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'merged', stderr: '' });
    expect(maxInFlight()).toBe(64);
  });
});
