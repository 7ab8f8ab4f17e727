import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { killChild } from '../../internal/tools/child-reaper.js';
import { checkCommand } from '../../internal/tools/command-guard.js';
import { BUILTIN_TOOLS, summarizeToolCall } from '../../internal/tools/index.js';
import { MAX_COMMAND_TIMEOUT_S } from '../../internal/tools/run-command.js';
import { call, isRunning, makeSandbox, toolContext, waitFor } from './helpers.js';

const { run_command } = BUILTIN_TOOLS;
let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
});
afterEach(() => box.cleanup());

describe('run_command', () => {
  it('runs in the workdir and returns combined stdout and stderr', async () => {
    const out = await call(run_command, { command: 'pwd; echo err >&2' }, toolContext(box.workdir));
    expect(out).toEqual({ content: `${box.workdir}\nerr\n`, isError: false });
  });

  it('reports a non-zero exit with its code', async () => {
    const out = await call(run_command, { command: 'echo partial; exit 3' }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'exit code 3\npartial\n', isError: true });
    expect(summarizeToolCall('run_command', { command: 'echo partial; exit 3' }, out)).toBe(
      '"echo partial; exit 3" (exit 3)',
    );
  });

  it('truncates output at 100 KB with a marker', async () => {
    const out = await call(
      run_command,
      { command: 'head -c 300000 /dev/zero | tr "\\0" a' },
      toolContext(box.workdir),
    );
    expect(out.isError).toBe(false);
    expect(out.content).toBe(`${'a'.repeat(100 * 1024)}\n... [output truncated, exceeded 100KB]`);
  });

  it('kills the whole process group when the run is aborted', async () => {
    const controller = new AbortController();
    const command = 'sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; wait';
    const pending = call(run_command, { command }, toolContext(box.workdir, { signal: controller.signal }));
    const pidFile = (name: string) => Number(readFileSync(join(box.workdir, name), 'utf8'));
    await waitFor(() => {
      try {
        return pidFile('bg.pid') > 0 && pidFile('sh.pid') > 0;
      } catch {
        return false;
      }
    });
    const [bg, sh] = [pidFile('bg.pid'), pidFile('sh.pid')];
    expect(isRunning(bg) && isRunning(sh)).toBe(true);
    controller.abort();
    // Returned with the group's 30 s sleeps still to go: the abort ended it, not their end.
    const out = await pending;
    expect(out).toEqual({ content: 'run_command: cancelled', isError: true });
    expect(await waitFor(() => !isRunning(bg) && !isRunning(sh))).toBe(true);
  });

  it('kills the whole group after the per-command timeout and says so', async () => {
    const command = 'echo started; sleep 30 & echo $! > bg.pid; wait';
    const out = await call(run_command, { command, timeout: '1' }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'timed out after 1s\nstarted\n', isError: true });
    const bg = Number(readFileSync(join(box.workdir, 'bg.pid'), 'utf8'));
    expect(await waitFor(() => !isRunning(bg))).toBe(true);
    expect(summarizeToolCall('run_command', { command }, out)).toBe(
      `${JSON.stringify(command)} (timed out after 1s)`,
    );
  });

  it('refuses a timeout above the maximum, before running anything', async () => {
    const out = await call(
      run_command,
      { command: 'echo ran > ran.txt', timeout: MAX_COMMAND_TIMEOUT_S + 1 },
      toolContext(box.workdir),
    );
    expect(out).toEqual({ content: '"timeout" must be at most 600 seconds, got 601', isError: true });
    expect(existsSync(join(box.workdir, 'ran.txt'))).toBe(false);
  });

  it('leaves no background process behind when sh exits', async () => {
    const out = await call(run_command, { command: 'sleep 30 & echo $!' }, toolContext(box.workdir));
    const bg = Number(out.content.trim());
    expect(await waitFor(() => !isRunning(bg))).toBe(true);
  });
});

describe('run_command with a daemon in a new session holding the pipes', () => {
  // setsid puts the sleep out of sh's process group, so the group kill does not reach it.
  const daemonPid = () => Number(readFileSync(join(box.workdir, 'daemon.pid'), 'utf8'));
  afterEach(() => {
    const pid = existsSync(join(box.workdir, 'daemon.pid')) ? daemonPid() : 0;
    if (pid > 0) killChild(pid, 'process');
  });

  it('returns once sh exits, with the output printed before', { timeout: 10_000 }, async () => {
    const command = 'setsid sleep 30 & echo $! > daemon.pid; sleep 0.2; echo started';
    const out = await call(run_command, { command }, toolContext(box.workdir));
    // It did not wait for the daemon holding its pipes: still running.
    expect(isRunning(daemonPid())).toBe(true);
    expect(out).toEqual({ content: 'started\n', isError: false });
  });

  it('keeps the exit code of sh', { timeout: 10_000 }, async () => {
    const command = 'setsid sleep 30 & echo $! > daemon.pid; sleep 0.2; echo partial; exit 4';
    const out = await call(run_command, { command }, toolContext(box.workdir));
    expect(isRunning(daemonPid())).toBe(true);
    expect(out).toEqual({ content: 'exit code 4\npartial\n', isError: true });
  });

  it('returns promptly when the run is aborted', { timeout: 10_000 }, async () => {
    const controller = new AbortController();
    const command = 'setsid sleep 30 & echo $! > daemon.pid; sleep 30';
    const pending = call(run_command, { command }, toolContext(box.workdir, { signal: controller.signal }));
    await waitFor(() => existsSync(join(box.workdir, 'daemon.pid')) && daemonPid() > 0);
    await new Promise((r) => setTimeout(r, 200)); // until setsid has left the group
    controller.abort();
    expect(await pending).toEqual({ content: 'run_command: cancelled', isError: true });
    // It did not wait for the daemon holding its pipes: still running.
    expect(isRunning(daemonPid())).toBe(true);
  });

  it('returns promptly after the per-command timeout', { timeout: 10_000 }, async () => {
    const command = 'setsid sleep 30 & echo $! > daemon.pid; echo started; sleep 30';
    const out = await call(run_command, { command, timeout: 1 }, toolContext(box.workdir));
    expect(isRunning(daemonPid())).toBe(true);
    expect(out).toEqual({ content: 'timed out after 1s\nstarted\n', isError: true });
  });
});

describe('command guard (false positives it must not have)', () => {
  const allowed = [
    'echo hello',
    'cat file~backup',
    'echo hello~world',
    'cat file..bak',
    'grep -r pattern .',
    'cat src/main.go lib/a/b.ts',
    'ls | grep foo && echo a; echo b > out.txt',
    'curl http://localhost:8080/graphql',
    'node -e \'fetch("https://example.com/api/v2")\'',
    'dd if=/dev/zero bs=1024 count=1 2>/dev/null',
    'cat sub/../file.txt',
  ];
  it.each(allowed)('%s', (command) => {
    expect(checkCommand('/tmp/work', command)).toBeUndefined();
  });

  it('allows absolute paths inside the workdir, but not a sibling with the same prefix', () => {
    expect(checkCommand('/tmp/work', 'cat /tmp/work/a.txt')).toBeUndefined();
    expect(checkCommand('/tmp/work', 'cat /tmp/worker/a.txt')).toContain('"/tmp/worker/a.txt"');
  });
});
