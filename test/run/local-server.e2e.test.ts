import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * A built-in provider pointed at a server on this machine (a local OpenAI-compatible one) needs
 * no key; a key that is set is still sent. A remote base URL still needs its key.
 */
const setup = e2eHomes({ keyless: true });

describe.concurrent('a loopback base URL', () => {
  it('runs without OPENAI_API_KEY and sends no key', async () => {
    const { home, fake } = await setup();
    home.agent('local', agentToml('local', { model: 'openai/local-model' }));
    fake.respond(() => ({ text: 'local answer' }));
    const args = ['run', 'local', '--agents-dir', home.agentsDir, '-p', 'hi'];
    const env = home.env(undefined, { AXE_OPENAI_BASE_URL: `${fake.url}/v1` });
    expect(await runAxe(args, { env })).toMatchObject({ code: 0, stdout: 'local answer', stderr: '' });
    // localhost is this machine too.
    const named = await runAxe(args, {
      env: { ...env, AXE_OPENAI_BASE_URL: `${fake.url.replace('127.0.0.1', 'localhost')}/v1` },
    });
    expect(named).toMatchObject({ code: 0, stdout: 'local answer' });
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) expect(request.headers.authorization).toBeUndefined();
  });

  it('still sends a key that is set', async () => {
    const { home, fake } = await setup();
    home.agent('local', agentToml('local', { model: 'openai/local-model' }));
    fake.respond(() => ({ text: 'ok' }));
    const env = home.env(undefined, { AXE_OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'sk-local' });
    const result = await runAxe(['run', 'local', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    expect(result).toMatchObject({ code: 0, stdout: 'ok' });
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer sk-local');
  });

  it('a remote base URL still needs the key (exit 2, nothing sent)', async () => {
    const { home } = await setup();
    home.agent('remote', agentToml('remote', { model: 'openai/gpt-x' }));
    // A documentation address (never reached: the missing key stops the run first).
    const env = home.env(undefined, { AXE_OPENAI_BASE_URL: 'http://192.0.2.1/v1' });
    const result = await runAxe(['run', 'remote', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    expect(result).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        'axe: API key for provider "openai" is not configured (set OPENAI_API_KEY or add to config.toml)\n',
    });
  });
});
