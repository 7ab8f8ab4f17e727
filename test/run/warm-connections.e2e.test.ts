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

  it('spawn_agents: the workers (the agent itself, on its model) find their connections open', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgentsConfig: ['spawn = true'] }));
    fake.respond((request) => {
      if (request.lastUserText.startsWith('part ')) return { text: 'did it' };
      return request.toolResults.length === 0
        ? {
            toolCalls: [
              { name: 'spawn_agents', arguments: { tasks: [{ task: 'part 1' }, { task: 'part 2' }] } },
            ],
            delayMs: 300,
          }
        : { text: 'merged' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const turn1 = fake.requests[0];
    const workers = fake.requests.filter((r) => r.lastUserText.startsWith('part '));
    expect(workers).toHaveLength(2);
    for (const worker of workers)
      expect(worker.connection.openedAt).toBeLessThanOrEqual(turn1?.finishedAt ?? 0);
  });

  // A lead that answers at once after 200 ms: the connections it opened meanwhile are counted.
  it.each([
    { what: 'its only sub-agent runs on another provider', config: [], env: {}, ahead: false },
    {
      what: 'a call may choose the model (overrides = true)',
      config: ['overrides = true'],
      env: {},
      ahead: true,
    },
    {
      what: 'AXE_SUBAGENT_MODEL names the model',
      config: [],
      env: { AXE_SUBAGENT_MODEL: 'anthropic/x' },
      ahead: true,
    },
    { what: 'delegate_task may run workers on its model', config: ['delegate = true'], env: {}, ahead: true },
  ])('connections opened ahead when $what: $ahead', async ({ config, env, ahead }) => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['w'], subAgentsConfig: config }));
    home.agent('w', agentToml('w', { model: 'openai/gpt-test' }));
    fake.respond(() => ({ text: 'no need', delayMs: 200 }));
    const before = fake.connections;
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: { ...home.env(fake.url), ...env },
    });
    expect(result.code).toBe(0);
    if (ahead) expect(fake.connections - before).toBeGreaterThan(1);
    else expect(fake.connections - before).toBe(1);
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
