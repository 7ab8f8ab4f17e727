import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProcessGroupStdioTransport } from '../../internal/tools/mcp/stdio-transport.js';
import { REPO_ROOT } from '../run/cli.js';
import { isRunning, waitFor } from './helpers.js';
import { childPids, ctx, open, stdio, tool } from './mcp-toolset.js';

const RAW = join(REPO_ROOT, 'test/tools/fixtures/raw-mcp-server.mjs');

/**
 * A stdio server that dies mid-call while a process it started in a session of its own (setsid,
 * as a daemon does) still holds its stdout: the call fails at once, naming the server, instead of
 * waiting for the daemon to close the pipe (30 s here; for ever for a real daemon).
 */
describe('MCP stdio server exiting while a daemon holds its stdout', () => {
  let dir: string;
  let pidFile: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'axe-mcp-exit-'));
    pidFile = join(dir, 'daemon.pid');
  });
  afterEach(() => {
    try {
      process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  });

  const openRaw = () => open([stdio('raw', process.execPath, [RAW], { DAEMON_PID_FILE: pidFile })]);
  const daemonPid = () => Number(readFileSync(pidFile, 'utf8'));

  it('fails the pending call at once with an error naming the server, and later calls too', async () => {
    const { toolset } = await openRaw();
    try {
      const [server] = childPids();
      const out = await tool(toolset, 'die').execute({ daemon: true }, ctx());
      // Failed while the daemon (30 s) still holds the server's pipes: not at their end.
      expect(isRunning(daemonPid())).toBe(true);
      expect(out.isError).toBe(true);
      expect(out.content).toMatch(/^mcp server "raw": /);
      expect(out.content).toContain('exited with code 1');
      expect(await waitFor(() => !isRunning(server!))).toBe(true);

      const later = await tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx());
      expect(later.isError).toBe(true);
      expect(later.content).toMatch(/^mcp server "raw": /);
      expect(later.content).toContain('exited with code 1');
    } finally {
      await toolset.close();
    }
  }, 10_000);

  it('still delivers what the server wrote before it exited', async () => {
    const { toolset } = await openRaw();
    try {
      expect(await tool(toolset, 'answer_and_die').execute({}, ctx())).toEqual({
        content: 'last words',
        isError: false,
      });
    } finally {
      await toolset.close();
    }
  }, 10_000);

  it('closing after the server died returns at once', async () => {
    const { toolset } = await openRaw();
    await tool(toolset, 'die').execute({ daemon: true }, ctx());
    await toolset.close();
    // Closed while the daemon (30 s) still holds the server's pipes.
    expect(isRunning(daemonPid())).toBe(true);
  }, 10_000);

  it("a server's own error (even with the SDK's code for a closed connection) keeps its message, naming the server", async () => {
    const { toolset } = await openRaw();
    try {
      expect(await tool(toolset, 'error').execute({}, ctx())).toEqual({
        content: 'mcp server "raw": MCP error -32000: backend down',
        isError: true,
      });
      expect(await tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx())).toEqual({
        content: '3',
        isError: false,
      });
    } finally {
      await toolset.close();
    }
  });

  it('a server that dies without a daemon still fails the call at once, with its exit code', async () => {
    const { toolset } = await openRaw();
    try {
      const out = await tool(toolset, 'die').execute({}, ctx());
      expect(out).toMatchObject({ isError: true });
      expect(out.content).toMatch(/^mcp server "raw": .*exited with code 1/);
    } finally {
      await toolset.close();
    }
  });
});

/** The transport on its own: how many times it reports its end, and what it leaves running. */
describe('ProcessGroupStdioTransport end of the connection', () => {
  async function started(script: string) {
    const transport = new ProcessGroupStdioTransport({
      command: process.execPath,
      args: ['-e', script],
      env: { PATH: process.env.PATH ?? '' },
      cwd: process.cwd(),
      onStderr: () => {},
    });
    let closes = 0;
    const closed = new Promise<void>((resolve) => {
      transport.onclose = () => {
        closes++;
        resolve();
      };
    });
    await transport.start();
    return { transport, closed, closes: () => closes };
  }

  it('a server exiting normally is reported closed once, with its exit code, and leaves no timer', async () => {
    // Every timer started meanwhile (the transport's drain timer among them) is either cleared or
    // does not keep the process alive.
    const timers = new Set<NodeJS.Timeout>();
    const setSpy = vi.spyOn(globalThis, 'setTimeout');
    const clearSpy = vi.spyOn(globalThis, 'clearTimeout');
    try {
      const { transport, closed, closes } = await started('process.stdout.write("bye\\n"); process.exit(3)');
      await closed;
      for (const result of setSpy.mock.results) timers.add(result.value as NodeJS.Timeout);
      const cleared = new Set(clearSpy.mock.calls.map(([timer]) => timer));
      expect([...timers].filter((timer) => timer.hasRef() && !cleared.has(timer))).toEqual([]);
      expect(clearSpy).toHaveBeenCalled();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(closes()).toBe(1);
      expect(transport.exitStatus()).toBe('exited with code 3');
      await transport.close();
      expect(closes()).toBe(1);
    } finally {
      setSpy.mockRestore();
      clearSpy.mockRestore();
    }
  });

  it('a server leaving a daemon on its pipes is reported closed once, soon after it exits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'axe-mcp-exit-'));
    const pidFile = join(dir, 'daemon.pid');
    try {
      const { transport, closes } = await started(
        `const d = require('child_process').spawn('setsid', ['sleep', '30'], { stdio: 'inherit' });
         require('fs').writeFileSync(${JSON.stringify(pidFile)}, String(d.pid)); process.exit(0)`,
      );
      expect(await waitFor(() => closes() > 0)).toBe(true);
      // Reported closed while the daemon (30 s) still holds the pipes.
      expect(isRunning(Number(readFileSync(pidFile, 'utf8')))).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(closes()).toBe(1);
      expect(transport.exitStatus()).toBe('exited with code 0');
      await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(
        'Not connected',
      );
    } finally {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    }
  }, 10_000);

  it('a server closed from here is reported closed once, with no exit status', async () => {
    const { transport, closes } = await started('process.stdin.resume()');
    await transport.close();
    expect(await waitFor(() => closes() > 0)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closes()).toBe(1);
    expect(transport.exitStatus()).toBeUndefined();
  });
});
