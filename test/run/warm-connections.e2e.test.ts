import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * While an agent that can delegate waits for its model, its children's connections are opened:
 * their requests go out on connections accepted before the parent's answer was sent.
 */
const setup = e2eHomes();

describe('connections for the children, opened during the parent turn', () => {
  it("a lead's three children send on connections opened while the lead's first turn was in flight", async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['w'] }));
    home.agent('w', agentToml('w'));
    const lead = delegatingParent([callAgent('w', 'a'), callAgent('w', 'b'), callAgent('w', 'c')]);
    fake.respond((request) =>
      roleOf(request) === 'lead'
        ? { ...lead(request), ...(request.toolResults.length === 0 ? { delayMs: 300 } : {}) }
        : { text: `did ${request.lastUserText}` },
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const [turn1] = fake.requests.filter((r) => roleOf(r) === 'lead');
    const children = fake.requests.filter((r) => roleOf(r) === 'w');
    expect(children).toHaveLength(3);
    const answered = turn1?.finishedAt ?? 0;
    // One may reuse the lead's own connection, free again once its answer was read.
    for (const child of children) expect(child.connection.openedAt).toBeLessThanOrEqual(answered);
    expect(new Set(children.map((c) => c.connection.id)).size).toBe(3);
  });

  it('an agent that cannot delegate opens only the connection it uses', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'hi', delayMs: 200 }));
    const before = fake.connections;
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    expect(fake.connections - before).toBe(1);
  });
});
