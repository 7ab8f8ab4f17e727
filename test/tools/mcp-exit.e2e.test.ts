import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../fake-llm/types.js';
import { REPO_ROOT, runAxe } from '../run/cli.js';
import { agentToml as agent, script, useE2e } from './e2e-helpers.js';

const RAW = join(REPO_ROOT, 'test/tools/fixtures/raw-mcp-server.mjs');
const setup = useE2e();

/**
 * Through `axe run`: an MCP result over 10 MiB (it lost the server for the rest of the run) and a
 * server dying with a daemon on its stdout (the run waited for the daemon; it holds stdout for an
 * hour here, so a run that waits for it never ends). The model reads what happened, naming the
 * server, and the run goes on.
 */
describe('MCP stdio failures through axe run', () => {
  // Killed after each test, whether the run ended or the test timed out waiting for it.
  let pidFile = '';
  afterEach(() => {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {}
  });

  async function run(...turns: ScriptedReply[]) {
    const { home, fake, workdir } = await setup();
    pidFile = join(home.root, 'daemon.pid');
    const server = [
      '[[mcp_servers]]',
      'name = "raw"',
      `command = "${process.execPath}"`,
      `args = ["${RAW}"]`,
      `env = { DAEMON_PID_FILE = "${pidFile}" }`,
    ].join('\n');
    home.agent('worker', agent(workdir, [], server));
    fake.respond(script(...turns, { text: 'done' }));
    const result = await runAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'done' });
    return fake.requests.slice(1).map((request) => request.toolResults.at(-1));
  }

  it('a result over 10 MiB: that call says so, and the server keeps answering', async () => {
    const results = await run(
      { toolCalls: [{ name: 'big', arguments: { bytes: 11 * 2 ** 20 } }] },
      { toolCalls: [{ name: 'count', arguments: { a: 1, b: 2 } }] },
    );
    expect(results).toEqual([
      expect.objectContaining({
        content: expect.stringMatching(
          /^mcp server "raw": the result of tool "big" is \d+ bytes, over the 10 MiB limit for one message; it was dropped \(the server is still connected\)$/,
        ),
        isError: true,
      }),
      expect.objectContaining({ content: '3', isError: false }),
    ]);
  }, 20_000);

  it('a server dying under a daemon: the call and the next fail at once, saying how it ended', async () => {
    const results = await run(
      { toolCalls: [{ name: 'die', arguments: { daemon: true } }] },
      { toolCalls: [{ name: 'count', arguments: { a: 1, b: 2 } }] },
    );
    expect(results).toEqual([
      expect.objectContaining({
        content: 'mcp server "raw": connection closed during the call: the server exited with code 1',
        isError: true,
      }),
      expect.objectContaining({
        content: 'mcp server "raw": not connected: the server exited with code 1',
        isError: true,
      }),
    ]);
  }, 20_000);
});
