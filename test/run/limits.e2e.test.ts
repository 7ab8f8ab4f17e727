import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/** axe's own limits, through the built binary: they hold, and they say they are axe's. */
const setup = e2eHomes();
const servers: Server[] = [];
afterAll(() => Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve)))));

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe.concurrent('limits', () => {
  it("a response past 32 MiB: exit 3, one line that says it is axe's limit, no retry", async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    let served = 0;
    const url = await listen((_req, res) => {
      served++;
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1 << 20, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 40) {
          sent++;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(url),
    });
    expect(result.code).toBe(3);
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(
        /^axe: anthropic: .*response body larger than 32 MiB \(axe's limit for one response\); no model answer is that large: check the base URL http:/,
      ),
    ]);
    expect(served).toBe(1);
  });

  it('url_fetch gives up after 15 s in all, even while a server keeps sending', async () => {
    const { home, fake } = await setup();
    const drip = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 500);
      res.on('close', () => clearInterval(timer));
    });
    home.agent('solo', agentToml('solo', { extra: ['tools = ["url_fetch"]'] }));
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'url_fetch', arguments: { url: `${drip}/slow` } }] }
        : { text: 'gave up' },
    );
    const started = Date.now();
    const result = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--timeout', '60'],
      {
        env: home.env(fake.url, { AXE_ALLOW_PRIVATE_HOSTS: '1' }),
      },
    );
    const took = Date.now() - started;
    // The server sends for ever: that the call ended at all, with this message, is the 15 s bound's
    // doing (and the run's own 60 s deadline lies beyond the test's timeout).
    expect(result).toMatchObject({ code: 0, stdout: 'gave up' });
    expect(fake.requests[1]?.toolResults[0]).toMatchObject({
      content: `url_fetch timed out after 15s: ${drip}/slow`,
      isError: true,
    });
    expect(took).toBeGreaterThanOrEqual(15_000);
  }, 40_000);
});
