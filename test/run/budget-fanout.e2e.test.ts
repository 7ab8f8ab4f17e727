import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** The token budget under a wide parallel fan-out: reserved before each call, so it holds. */
const setup = e2eHomes();

const CHILDREN = 200;
const CHILD_TOKENS = 15; // the fake's default usage: 10 in, 5 out
const LIMIT = 100;

interface AgentNode {
  status: string;
  children?: AgentNode[];
}

describe('budget under a 200-way fan-out', () => {
  it('is overrun by no more than the calls in flight; every child it stopped reports budget', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['w'], subAgentsConfig: ['max_parallel = 64'] }));
    home.agent('w', agentToml('w'));
    let inFlight = 0;
    let maxInFlight = 0;
    fake.respond(async (request) => {
      if (roleOf(request) === 'lead') {
        return request.toolResults.length === 0
          ? {
              toolCalls: Array.from({ length: CHILDREN }, (_, i) => callAgent('w', `task ${i}`)),
              usage: { input: 20, output: 5 },
            }
          : { text: 'merged' };
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight--;
      return { text: 'child answer' };
    });
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--max-tokens', String(LIMIT)],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(4);
    expect(result.stderr).not.toMatch(/MaxListeners|memory leak/i);
    const envelope = JSON.parse(result.stdout) as { budget_used_tokens: number; agents: AgentNode[] };
    const childCalls = fake.requests.filter((request) => roleOf(request) === 'w').length;
    // Every call that started was paid for; the overrun is at most the calls in flight at the line.
    expect(envelope.budget_used_tokens).toBe(25 + childCalls * CHILD_TOKENS);
    expect(envelope.budget_used_tokens - LIMIT).toBeLessThanOrEqual(maxInFlight * CHILD_TOKENS);
    expect(envelope.agents).toHaveLength(CHILDREN);
    const statuses = envelope.agents.map((agent) => agent.status);
    expect(statuses.filter((status) => status === 'ok')).toHaveLength(childCalls);
    expect(statuses.filter((status) => status === 'budget')).toHaveLength(CHILDREN - childCalls);
    console.log(
      `budget ${LIMIT}: used ${envelope.budget_used_tokens} (${childCalls} child calls, at most ${maxInFlight} in flight)`,
    );
  });

  it('a budget far from its limit keeps the fan-out parallel', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['w'], subAgentsConfig: ['max_parallel = 64'] }));
    home.agent('w', agentToml('w'));
    let inFlight = 0;
    let maxInFlight = 0;
    fake.respond(async (request) => {
      if (roleOf(request) === 'lead') {
        return request.toolResults.length === 0
          ? { toolCalls: Array.from({ length: 64 }, (_, i) => callAgent('w', `task ${i}`)) }
          : { text: 'merged' };
      }
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 100));
      inFlight--;
      return { text: 'child answer' };
    });
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--max-tokens', '10000000'],
      { env: home.env(fake.url) },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'merged', stderr: '' });
    expect(maxInFlight).toBe(64);
  });
});
