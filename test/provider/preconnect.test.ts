import { existsSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { runAxe, startAxe, TempHome, waitFor } from '../run/cli.js';
import { PAGED } from '../tools/mcp-servers.js';
import { LOCALHOST_CERT, startTlsAnthropic } from './tls-anthropic.js';

/**
 * An agent's first connection to its provider opens as the agent starts, so DNS, TCP and TLS are
 * done while it reads its files and starts its MCP servers. Here the MCP server answers only once
 * the test opens its gate: the test opens it once the provider's server has seen the connection,
 * which without the early connection would never happen (the first request waits for the MCP
 * server), so the order is shown by events, not by how long anything took.
 */
let fake: FakeLlm;
let home: TempHome;
let gate = '';

beforeAll(async () => {
  fake = await startFakeLlm();
  home = new TempHome();
  gate = path.join(home.root, 'mcp-gate');
  const slowServer = [
    '[[mcp_servers]]',
    'name = "slow"',
    `command = ${JSON.stringify(process.execPath)}`,
    `args = [${JSON.stringify(PAGED)}]`,
    `env = { START_GATE_FILE = ${JSON.stringify(gate)} }`,
  ];
  home.agent('slow', agentToml('slow', { extra: slowServer }));
  home.agent('plain', agentToml('plain'));
});

/** Runs `slow`; opens the MCP server's gate once `ready` holds, and says when it did. */
async function runGated(env: NodeJS.ProcessEnv, ready: () => boolean) {
  rmSync(gate, { force: true });
  rmSync(`${gate}.waiting`, { force: true });
  const run = startAxe(['run', 'slow', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
  let gateOpenedAt = 0;
  try {
    await waitFor(ready);
  } finally {
    // Opened even when `ready` never held, so that the run still ends.
    gateOpenedAt = Date.now();
    writeFileSync(gate, '');
  }
  return { result: await run.done, gateOpenedAt };
}

afterAll(async () => {
  await fake.close();
  home.cleanup();
});

describe('the connection to the provider opens while the agent sets up', () => {
  it('over http://: the first request goes out on a connection opened before the MCP server answered', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'answered' }));
    const before = fake.connections;
    // The MCP server answers only once the connection is open.
    const { result } = await runGated(home.env(fake.url), () => fake.connections > before);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('answered');
    const [request] = fake.requests;
    expect(request?.toolNames).toContain('shout');
    // The one it opened ahead, and no other.
    expect(fake.connections - before).toBe(1);
  });

  it('over https://: the same, with the TLS handshake done ahead (its name checked against the certificate)', async () => {
    const { server, url } = await startTlsAnthropic('over TLS');
    const handshakes: number[] = [];
    const requests: { at: number; handshakeAt: number }[] = [];
    const connectedAt = new WeakMap<Socket, number>();
    server.on('secureConnection', (socket: Socket) => {
      handshakes.push(Date.now());
      connectedAt.set(socket, Date.now());
    });
    server.on('request', (request: IncomingMessage) => {
      requests.push({ at: Date.now(), handshakeAt: connectedAt.get(request.socket) ?? Number.NaN });
    });
    try {
      // The MCP server answers only once the TLS handshake is done.
      const env = home.env(undefined, {
        AXE_ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: 'test-key',
        NODE_EXTRA_CA_CERTS: LOCALHOST_CERT,
      });
      const { result } = await runGated(env, () => handshakes.length > 0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('over TLS');
      expect(handshakes).toHaveLength(1);
      expect(requests).toHaveLength(1);
      // The request went out on the connection opened ahead.
      expect(requests[0]?.handshakeAt).toBe(handshakes[0]);
    } finally {
      server.close();
    }
  });

  it('not for a provider with a Host header of its own (Node names the TLS server after it)', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'answered' }));
    const config = home.file(
      'host-config/axe/config.toml',
      `[providers.anthropic]\nheaders = { Host = "localhost:${new URL(fake.url).port}" }\n`,
    );
    // The gate opens once the MCP server waits at it, which is after axe would have opened a
    // connection ahead; the one connection opens only after, for the request.
    const { result, gateOpenedAt } = await runGated(
      home.env(fake.url, { XDG_CONFIG_HOME: path.dirname(path.dirname(config)) }),
      () => existsSync(`${gate}.waiting`),
    );
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('answered');
    const [request] = fake.requests;
    expect(request?.headers.host).toBe(`localhost:${new URL(fake.url).port}`);
    expect(request!.connection.openedAt).toBeGreaterThanOrEqual(gateOpenedAt);
  });

  it('not without a key: the run fails as before, and no connection is opened', async () => {
    // The provider's own (remote) address: a loopback base URL needs no key (a local server).
    const before = fake.connections;
    const result = await runAxe(['run', 'slow', '--agents-dir', home.agentsDir, '-p', 'hi'], {
      env: home.env(undefined),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
    expect(fake.connections).toBe(before);
  });
});

describe('a live run opens its first connection while it reads stdin', () => {
  it('the connection is open before stdin ends, and the request goes out on it', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'reviewed' }));
    const before = fake.connections;
    const run = startAxe(['run', 'plain', '--agents-dir', home.agentsDir], {
      env: home.env(fake.url),
      holdStdin: true,
    });
    // stdin is still open: axe cannot have started the run yet.
    await waitFor(() => fake.connections > before);
    expect(fake.requests).toHaveLength(0);
    run.endStdin('the diff');
    const result = await run.done;
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('reviewed');
    expect(fake.requests[0]?.lastUserText).toBe('the diff');
    expect(fake.connections - before).toBe(1);
  });

  it('not for --dry-run or --replay, which call no model', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'recorded' }));
    const cassette = path.join(home.root, 'plain.jsonl');
    const recorded = await runAxe(
      ['run', 'plain', '--agents-dir', home.agentsDir, '-p', 'hi', '--record', cassette],
      {
        env: home.env(fake.url),
      },
    );
    expect(recorded.stdout).toBe('recorded');
    const before = fake.connections;
    for (const flag of [['--dry-run'], ['--replay', cassette]]) {
      const run = startAxe(['run', 'plain', '--agents-dir', home.agentsDir, ...flag], {
        env: home.env(fake.url),
        holdStdin: true,
      });
      // Long enough for a connection opened at start to reach the server.
      await new Promise((resolve) => setTimeout(resolve, 300));
      run.endStdin('hi');
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
    }
    expect(fake.connections).toBe(before);
  });
});
