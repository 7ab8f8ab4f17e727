import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * Dollars in `--json` and `--verbose` (internal/prices/): the whole tree's cost at its models'
 * prices, with and without the prompt cache, beside Go's keys; none when a price is unknown.
 */
const setup = e2eHomes();

interface Envelope {
  cost_usd?: number;
  cost_usd_without_cache?: number;
  input_tokens: number;
  agents: { cost_usd?: number; cost_usd_without_cache?: number }[];
}

async function run(model: string, config?: string, extraArgs: string[] = ['--json']) {
  const { home, fake } = await setup();
  if (config !== undefined) home.file('config/axe/config.toml', config);
  home.agent('solo', agentToml('solo', { model }));
  fake.enqueue({ text: 'ok', usage: { input: 1000, output: 100, cacheRead: 4000, cacheWrite: 2000 } });
  const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', ...extraArgs], {
    env: home.env(fake.url),
  });
  return result;
}

describe.concurrent('cost in dollars', () => {
  it('--json gives the run’s dollars from the price table, and what they would have been without caching', async () => {
    const result = await run('anthropic/claude-sonnet-4-5');
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout) as Envelope;
    // $3 / $15 per million, cache reads $0.30, writes $3.75.
    const usd = (1000 * 3 + 4000 * 0.3 + 2000 * 3.75 + 100 * 15) / 1e6;
    const uncached = ((1000 + 4000 + 2000) * 3 + 100 * 15) / 1e6;
    expect(envelope.cost_usd).toBeCloseTo(usd, 12);
    expect(envelope.cost_usd_without_cache).toBeCloseTo(uncached, 12);
    // Go's keys are as they were.
    expect(envelope.input_tokens).toBe(1000);
  });

  it('config.toml’s [prices] prices a model the table does not know; without it there are no dollars, never 0', async () => {
    const priced = await run(
      'anthropic/claude-test',
      '[prices."anthropic/claude-test"]\ninput = 2\noutput = 10\n',
    );
    const envelope = JSON.parse(priced.stdout) as Envelope;
    // No cache prices: cached tokens at the input price, so caching saved nothing.
    expect(envelope.cost_usd).toBeCloseTo((7000 * 2 + 100 * 10) / 1e6, 12);
    expect(envelope.cost_usd_without_cache).toBeCloseTo(envelope.cost_usd as number, 12);
    const unknown = JSON.parse((await run('anthropic/claude-test')).stdout) as Envelope;
    expect(unknown).not.toHaveProperty('cost_usd');
    expect(unknown).not.toHaveProperty('cost_usd_without_cache');
    const local = JSON.parse((await run('ollama/llama3.2')).stdout) as Envelope;
    expect(local).not.toHaveProperty('cost_usd');
  });

  it('--verbose closes with the cost, and what caching saved', async () => {
    const result = await run('anthropic/claude-sonnet-4-5', undefined, ['--verbose']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Cost:     $0.0132 ($0.0225 without caching)\n');
  });

  it('sums the tree: each agent’s own calls in its node, the whole tree at the top', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { model: 'anthropic/claude-sonnet-4-5', subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper', { model: 'openai/gpt-5' }));
    const lead = delegatingParent([callAgent('helper', 'sum')]);
    fake.respond((request) =>
      roleOf(request) === 'helper' ? { text: 'sum done', usage: { input: 2000, output: 50 } } : lead(request),
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout) as Envelope;
    // The lead: 100 + 200 input, 10 + 20 output at Sonnet's prices; the helper 2,000 / 50 at GPT-5's.
    const leadUsd = (300 * 3 + 30 * 15) / 1e6;
    const helperUsd = (2000 * 1.25 + 50 * 10) / 1e6;
    expect(envelope.agents[0]?.cost_usd).toBeCloseTo(helperUsd, 12);
    expect(envelope.cost_usd).toBeCloseTo(leadUsd + helperUsd, 12);
  });

  it('axe runs show and runs list give a recorded run’s dollars, from its tokens and models', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo', { model: 'anthropic/claude-sonnet-4-5' }));
    fake.enqueue({ text: 'ok', usage: { input: 1000, output: 100, cacheRead: 4000, cacheWrite: 2000 } });
    const env = home.env(fake.url);
    expect((await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi'], { env })).code).toBe(0);
    const shown = await runAxe(['runs', 'show', 'last'], { env });
    expect(shown.code).toBe(0);
    expect(shown.stdout.split('\n')[0]).toContain(', $0.0132 ($0.0225 without caching)');
    const json = JSON.parse((await runAxe(['runs', 'show', 'last', '--json'], { env })).stdout) as Envelope;
    expect(json.cost_usd).toBeCloseTo(0.0132, 12);
    expect(json.cost_usd_without_cache).toBeCloseTo(0.0225, 12);
    const rows = JSON.parse((await runAxe(['runs', 'list', '--json'], { env })).stdout) as Envelope[];
    expect(rows[0]?.cost_usd).toBeCloseTo(0.0132, 12);
  });
});
