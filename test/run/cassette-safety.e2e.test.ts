import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type SmallDisk, smallDisk } from '../fs/small-disk.js';
import { skipBecause } from '../skip.js';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe, startAxe, waitFor } from './cli.js';

/**
 * `--record` never leaves an empty or cut cassette: a run that fails, is interrupted, or cannot
 * write keeps the previous cassette; concurrent recorders each publish a complete one.
 */
const setup = e2eHomes();
let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.unmount();
  disk = undefined;
});

/** Every line a well-formed entry, and the number of entries. */
function entries(file: string): number {
  const text = readFileSync(file, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  const parsed = text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as { key: string; response?: unknown });
  for (const entry of parsed) expect(entry.response).toBeDefined();
  return parsed.length;
}

describe.concurrent('axe run --record', () => {
  it('an interrupted run or a provider error keeps the previous cassette, and says so', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const cassette = path.join(home.root, 'solo.jsonl');
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '--record', cassette];
    fake.enqueue({ text: 'first answer' });
    expect(await runAxe([...args, '-p', 'one'], { env: home.env(fake.url) })).toMatchObject({
      code: 0,
      stderr: '',
    });
    const before = readFileSync(cassette, 'utf8');
    expect(entries(cassette)).toBe(1);

    fake.enqueue({ text: 'slow', delayMs: 10_000 });
    const interrupted = startAxe([...args, '-p', 'two'], { env: home.env(fake.url) });
    await waitFor(() => fake.requests.length === 2);
    interrupted.kill('SIGINT');
    const stopped = await interrupted.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toContain(
      `--record: nothing recorded because the run failed; ${cassette} is unchanged`,
    );
    expect(readFileSync(cassette, 'utf8')).toBe(before);

    fake.enqueue({ fault: { kind: 'status', status: 400, message: 'bad request' } });
    const failed = await runAxe([...args, '-p', 'three'], { env: home.env(fake.url) });
    expect(failed.code).toBe(1);
    expect(lines(failed.stderr)).toEqual([
      `Warning: --record: nothing recorded because the run failed; ${cassette} is unchanged`,
      expect.stringMatching(/^axe: .*bad request/),
    ]);
    expect(readFileSync(cassette, 'utf8')).toBe(before);

    const fresh = path.join(home.root, 'never.jsonl');
    fake.enqueue({ fault: { kind: 'status', status: 400 } });
    await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--record', fresh], {
      env: home.env(fake.url),
    });
    expect(existsSync(fresh)).toBe(false);
  });

  it('concurrent recorders to one file: each exits 0 and the file is one complete cassette', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond((request) => ({
      text: `answer to ${request.lastUserText}`,
      delayMs: 20 + Number(request.lastUserText.slice(-1)) * 15,
    }));
    const cassette = path.join(home.root, 'shared.jsonl');
    const record = (i: number) =>
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', `task ${i}`, '--record', cassette], {
        env: home.env(fake.url),
      });
    await record(9);
    // While they run, whoever reads the file always finds one complete cassette.
    let reading = true;
    let reads = 0;
    const reader = (async () => {
      while (reading) {
        expect(entries(cassette)).toBe(1);
        reads++;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const runs = await Promise.all(Array.from({ length: 8 }, (_, i) => record(i)));
    reading = false;
    await reader;
    expect(reads).toBeGreaterThan(10);
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });
    expect(entries(cassette)).toBe(1);
    // The survivor replays its own run offline.
    const text = readFileSync(cassette, 'utf8');
    const task = /task \d/.exec(text)?.[0] ?? '';
    const replay = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', task, '--replay', cassette],
      {
        env: home.env(),
      },
    );
    expect(replay.code).toBe(0);
    expect(execFileSync('ls', ['-a', home.root], { encoding: 'utf8' })).not.toContain('.tmp');
  });

  it('a full disk: the answer is printed, the run exits 1 naming the cassette, the old one stays', async (context) => {
    const made = smallDisk('64k');
    if (typeof made === 'string') return skipBecause(context, made);
    disk = made;
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const cassette = path.join(disk.root, 'big.jsonl');
    writeFileSync(cassette, 'previous\n');
    fake.enqueue({ text: 'y'.repeat(100_000) });
    const result = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--record', cassette],
      {
        env: home.env(fake.url),
      },
    );
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('y'.repeat(100_000));
    expect(result.stderr).toBe(
      `axe: --record: could not write ${cassette} (no space left on the device): nothing recorded, the previous cassette is unchanged\n`,
    );
    expect(readFileSync(cassette, 'utf8')).toBe('previous\n');
  });

  it('a FIFO, a device or a directory as --record or --replay is exit 2 naming it, never a hang', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const fifo = path.join(home.root, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const base = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];
    const cases: [string, string, string][] = [
      ['--replay', fifo, `axe: --replay: ${fifo} is a FIFO, not a regular file\n`],
      ['--replay', '/dev/zero', 'axe: --replay: /dev/zero is a character device, not a regular file\n'],
      ['--replay', home.root, `axe: --replay: ${home.root} is a directory, not a regular file\n`],
      ['--record', fifo, `axe: --record: ${fifo} is a FIFO, not a regular file\n`],
      ['--record', home.root, `axe: --record: ${home.root} is a directory, not a regular file\n`],
      [
        '--record',
        path.join(home.root, 'no/such/dir.jsonl'),
        expect.stringContaining('its directory does not exist'),
      ],
    ];
    for (const [flag, file, stderr] of cases) {
      const result = await runAxe([...base, flag, file], { env: home.env('http://127.0.0.1:9') });
      expect({ flag, file, code: result.code, stderr: result.stderr }).toEqual({
        flag,
        file,
        code: 2,
        stderr,
      });
    }
  });
});
