import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe } from '../run/cli.js';

/** Go axe's `opencode` provider (OpenCode Zen) and `api = "responses"`, through the built binary. */
const setup = e2eHomes();

describe.concurrent('opencode', () => {
  it.each([
    ['claude-sonnet-4-5', '/v1/messages', 'x-api-key'],
    ['gpt-5-mini', '/v1/responses', 'authorization'],
    ['kimi-k2', '/v1/chat/completions', 'authorization'],
  ])('opencode/%s goes to %s with its key, through a tool round trip', async (model, route, authHeader) => {
    const { home, fake } = await setup();
    home.agent(
      'zen',
      agentToml('zen', { model: `opencode/${model}`, extra: ['tools = ["list_directory"]'] }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] }
        : { text: `listed: ${request.toolResults[0]?.content}` },
    );
    const env = home.env(undefined, { OPENCODE_API_KEY: 'zen-test-key', AXE_OPENCODE_BASE_URL: fake.url });
    const result = await runAxe(
      ['run', 'zen', '--agents-dir', home.agentsDir, '-p', 'list', '--workdir', home.agentsDir],
      { env },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('listed: zen.toml');
    expect(fake.requests.map((r) => r.path)).toEqual([route, route]);
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]?.headers[authHeader]).toContain('zen-test-key');
    expect(fake.requests[1]?.toolResults).toEqual([expect.objectContaining({ content: 'zen.toml' })]);
  });

  it('streams from the Responses API; a missing OPENCODE_API_KEY is exit 2 before any request', async () => {
    const { home, fake } = await setup();
    home.agent('zen', agentToml('zen', { model: 'opencode/gpt-5-mini' }));
    fake.enqueue({ text: 'streamed answer ✓' });
    const env = home.env(undefined, { OPENCODE_API_KEY: 'zen-test-key', AXE_OPENCODE_BASE_URL: fake.url });
    const streamed = await runAxe(['run', 'zen', '--agents-dir', home.agentsDir, '-p', 'hi', '--stream'], {
      env,
    });
    expect(streamed).toMatchObject({ code: 0, stdout: 'streamed answer ✓' });
    expect(fake.requests[0]?.stream).toBe(true);
    // At OpenCode's own base URL, never reached (a loopback one, like the fake's, needs no key).
    const keyless = await runAxe(['run', 'zen', '--agents-dir', home.agentsDir, '-p', 'hi'], {
      env: home.env(),
    });
    expect(keyless).toMatchObject({
      code: 2,
      stderr:
        'axe: API key for provider "opencode" is not configured (set OPENCODE_API_KEY or add to config.toml)\n',
    });
    expect(fake.requests).toHaveLength(1);
  });

  it('[providers.<name>] api = "responses" points any Responses API server at the wire', async () => {
    const { home, fake } = await setup();
    writeFileSync(
      path.join(home.configDir, 'config.toml'),
      `[providers.myresp]\nbase_url = "${fake.url}/v1"\napi = "responses"\n`,
    );
    home.agent('r', agentToml('r', { model: 'myresp/some-model' }));
    fake.enqueue({ text: 'from responses' });
    const result = await runAxe(['run', 'r', '--agents-dir', home.agentsDir, '-p', 'hi', '--json'], {
      env: home.env(undefined, { MYRESP_API_KEY: 'k-123456789' }),
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      content: 'from responses',
      provider: 'myresp',
      stop_reason: 'completed',
    });
    expect(fake.requests[0]).toMatchObject({ path: '/v1/responses', system: 'ROLE:r' });
  });
});
