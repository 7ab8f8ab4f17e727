import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { AXE_BIN, e2eHomes, lines, REPO_ROOT, runAxe } from './cli.js';
import { runUnderUmask000 } from './umask.js';

/** Nothing axe opens can hang it: a FIFO in the place of a file it writes, at the CLI. */
const setup = e2eHomes();

function mkfifo(file: string): string {
  execFileSync('mkfifo', [file]);
  return file;
}

describe.concurrent('--events to a FIFO', () => {
  it('with no reader: refused at once, exit 2, one line naming the FIFO', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const fifo = mkfifo(path.join(home.root, 'events.fifo'));
    const result = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', '--events', fifo],
      {
        env: home.env(fake.url),
      },
    );
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(lines(result.stderr)).toEqual([`axe: --events: ${fifo} is a FIFO nobody reads`]);
    expect(fake.requests).toHaveLength(0);
  });

  it('a socket: exit 2, one line saying what it is (not a raw ENXIO)', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const socket = path.join(home.root, 'events.sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      const result = await runAxe(
        ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', '--events', socket],
        { env: home.env(fake.url) },
      );
      expect(result).toMatchObject({ code: 2, stdout: '' });
      expect(lines(result.stderr)).toEqual([`axe: --events: ${socket} is a socket, not a regular file`]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('with a reader that never reads: the run still ends, its answer printed, the drop said once', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const fifo = mkfifo(path.join(home.root, 'stalled.fifo'));
    // Opened for reading (non-blocking, so this test does not wait for a writer) and never read.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      // Far more than a pipe holds (64 KiB): the answer is in the events' last lines.
      const answer = 'x'.repeat(300_000);
      fake.enqueue({ text: answer });
      const result = await runAxe(
        ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', '--events', fifo, '--no-record-run'],
        { env: home.env(fake.url) },
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(answer);
      expect(lines(result.stderr)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^Warning: --events: cannot write ${fifo} \\(its reader stopped reading: \\d+ bytes were not written\\): events stop here$`,
          ),
        ),
      ]);
    } finally {
      closeSync(reader);
    }
  });
});

function modeOf(file: string): number {
  return statSync(file).mode & 0o777;
}

describe('--events to a FIFO whose reader stopped, while the run waits', () => {
  it('--timeout still ends the run (a blocking write would hold the event loop for ever)', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const fifo = mkfifo(path.join(home.root, 'stalled.fifo'));
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      fake.enqueue({ fault: { kind: 'hang' } });
      // The message event alone is more than the pipe holds; then the model never answers.
      const result = await runAxe(
        ['run', 'solo', '--agents-dir', home.agentsDir, '--events', fifo, '--timeout', '2'],
        { env: home.env(fake.url), stdin: 'y'.repeat(300_000) },
      );
      expect(fake.requests).toHaveLength(1);
      expect(result).toMatchObject({ code: 3, signal: null, stdout: '' });
      expect(lines(result.stderr)).toEqual([
        'axe: timeout after 2s',
        expect.stringMatching(
          /^Warning: --events: cannot write .*stalled\.fifo \(its reader stopped reading: /,
        ),
      ]);
    } finally {
      closeSync(reader);
    }
  });
});

describe.concurrent('file modes under umask 000', () => {
  it('--events is created 0600', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const events = path.join(home.root, 'events.jsonl');
    fake.enqueue({ text: 'ok' });
    const result = await runUnderUmask000(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', '--events', events],
      home.env(fake.url),
    );
    expect(result).toMatchObject({ code: 0, stdout: 'ok' });
    expect(modeOf(events)).toBe(0o600);
  });

  it('axe config init and agents init: directories 0755 (never writable by others), config.toml 0600', async () => {
    const { home } = await setup();
    const env = home.env(undefined, { XDG_CONFIG_HOME: path.join(home.root, 'fresh') });
    expect(await runUnderUmask000(['config', 'init'], env)).toMatchObject({ code: 0, stderr: '' });
    const configDir = path.join(home.root, 'fresh', 'axe');
    for (const dir of [
      path.dirname(configDir),
      configDir,
      path.join(configDir, 'agents'),
      path.join(configDir, 'skills'),
    ]) {
      expect(modeOf(dir)).toBe(0o755);
    }
    expect(modeOf(path.join(configDir, 'config.toml'))).toBe(0o600);
    const agentsDir = path.join(home.root, 'new-agents');
    const init = await runUnderUmask000(['agents', 'init', 'helper', '--agents-dir', agentsDir], env);
    expect(init).toMatchObject({ code: 0, stderr: '' });
    expect(modeOf(agentsDir)).toBe(0o755);
  });

  it('a --record cassette is created 0600', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const cassette = path.join(home.root, 'solo.jsonl');
    fake.enqueue({ text: 'ok' });
    const result = await runUnderUmask000(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi', '--record', cassette, '--no-record-run'],
      home.env(fake.url),
    );
    expect(result).toMatchObject({ code: 0, stdout: 'ok' });
    expect(modeOf(cassette)).toBe(0o600);
  });

  it('an artifact directory (and the cache directories above it) are created 0700', async () => {
    const { home, fake } = await setup();
    const extra = ['tools = ["write_file"]', '[artifacts]', 'enabled = true', 'default_write = true'];
    home.agent('maker', agentToml('maker', { extra }));
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'write_file', arguments: { path: 'a.md', content: 'made' } }] }
        : { text: 'done' },
    );
    const result = await runUnderUmask000(
      ['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go', '--keep-artifacts', '--no-record-run'],
      home.env(fake.url),
    );
    expect(result).toMatchObject({ code: 0, stdout: 'done' });
    const dir = /^artifacts preserved: (.*)$/m.exec(result.stderr)?.[1] ?? '';
    expect(readFileSync(path.join(dir, 'a.md'), 'utf8')).toBe('made');
    expect(modeOf(dir)).toBe(0o700);
    expect(modeOf(path.dirname(dir))).toBe(0o700);
  });
});

describe('stdout that cannot be written', () => {
  it('axe agents list > /dev/full: one line on stderr naming why, exit 1', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [AXE_BIN, 'agents', 'list', '--agents-dir', home.agentsDir], {
        cwd: REPO_ROOT,
        env: home.env(),
        stdio: ['ignore', full, 'pipe'],
      });
      let stderr = '';
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
        stderr += chunk;
      });
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(1);
      expect(stderr).toBe('axe: cannot write to stdout: no space left on the device\n');
    } finally {
      closeSync(full);
    }
  });
});

describe('file system errors in words', () => {
  it('one that reaches the top names the path and says what happened (not ENOTDIR: …, scandir)', async () => {
    const { home } = await setup();
    const notADir = home.file('data-file', '');
    const result = await runAxe(['runs', 'show', 'x'], {
      env: home.env(undefined, { XDG_DATA_HOME: notADir }),
    });
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr).toBe(`axe: ${notADir}/axe/runs: a part of the path is not a directory\n`);
  });
});
