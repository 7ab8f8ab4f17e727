import { execFileSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countEntries, formatEntry } from '../../internal/memory/memory.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, lines, runAxe, type TempHome } from '../run/cli.js';
import { runUnderUmask000 } from '../run/umask.js';

/** The memory log as a file axe opens: never a hang, owner-only, a symlink written through. */
const setup = e2eHomes();

function keeper(home: TempHome, file?: string, extra: string[] = []): void {
  const where = file === undefined ? [] : [`path = "${file}"`];
  home.agent('keeper', agentToml('keeper', { extra: ['[memory]', 'enabled = true', ...where, ...extra] }));
}

function log(entries: number): string {
  return Array.from({ length: entries }, (_, i) =>
    formatEntry(new Date(Date.UTC(2026, 0, 1, 0, 0, i)), `task ${i}`, `result ${i}`).toString(),
  ).join('');
}

function modeOf(file: string): number {
  return statSync(file).mode & 0o777;
}

describe.concurrent('memory files', () => {
  it('a FIFO as the memory file: the run ends with its answer, both warnings name the FIFO', async () => {
    const { home, fake } = await setup();
    const fifo = path.join(home.root, 'keeper.md');
    execFileSync('mkfifo', [fifo]);
    keeper(home, fifo);
    fake.enqueue({ text: 'answer' });
    const result = await runAxe(['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'answer' });
    expect(lines(result.stderr)).toEqual([
      `Warning: failed to load memory for "keeper": ${fifo} is a FIFO, not a regular file`,
      `Warning: failed to save memory for "keeper": ${fifo} is a FIFO nobody reads`,
    ]);
  });

  it('a FIFO as the lock: the run ends saying so, and axe gc fails naming it (exit 1)', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'keeper.md');
    writeFileSync(file, log(3));
    execFileSync('mkfifo', [`${file}.lock`]);
    keeper(home, file, ['last_n = 1']);
    fake.enqueue({ text: 'answer' });
    const lockProblem = `${file}.lock is a FIFO, not a lock file axe made; remove it if no axe is running`;
    const run = await runAxe(['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(run).toMatchObject({ code: 0, stdout: 'answer' });
    expect(lines(run.stderr)).toEqual([`Warning: failed to save memory for "keeper": ${lockProblem}`]);
    fake.enqueue({ text: 'report' });
    const gc = await runAxe(['gc', 'keeper', '--agents-dir', home.agentsDir], { env: home.env(fake.url) });
    expect(gc.code).toBe(1);
    expect(lines(gc.stderr)).toEqual([`axe: cannot trim memory: ${lockProblem}`]);
    expect(readFileSync(file, 'utf8')).toBe(log(3));
  });

  it('axe gc trims a symlinked log where it is: the link stays a link', async () => {
    const { home, fake } = await setup();
    const target = path.join(home.root, 'real', 'keeper.md');
    mkdirSync(path.dirname(target));
    writeFileSync(target, log(4));
    const link = path.join(home.root, 'keeper.md');
    symlinkSync(target, link);
    keeper(home, link, ['last_n = 1']);
    fake.enqueue({ text: 'report' });
    const gc = await runAxe(['gc', 'keeper', '--agents-dir', home.agentsDir], { env: home.env(fake.url) });
    expect(gc).toMatchObject({ code: 0, stderr: '' });
    expect(gc.stdout).toContain('Trimmed: 3 entries removed, 1 entries kept.');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(countEntries(readFileSync(target, 'utf8'))).toBe(1);
  });

  it('under umask 000 and --no-record-run: the data and memory directories 0700, the log 0600', async () => {
    const { home, fake } = await setup();
    keeper(home);
    fake.enqueue({ text: 'answer' });
    const result = await runUnderUmask000(
      ['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x', '--no-record-run'],
      home.env(fake.url),
    );
    expect(result).toMatchObject({ code: 0, stdout: 'answer', stderr: '' });
    const dataDir = path.join(home.root, 'data', 'axe');
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(path.join(dataDir, 'memory'))).toBe(0o700);
    expect(modeOf(path.join(dataDir, 'memory', 'keeper.md'))).toBe(0o600);
  });

  it('a data directory others may write: one warning naming it, though memory and the record both use it', async () => {
    const { home, fake } = await setup();
    keeper(home);
    const dataDir = path.join(home.root, 'data', 'axe');
    mkdirSync(dataDir, { recursive: true });
    chmodSync(dataDir, 0o777);
    fake.enqueue({ text: 'answer' });
    const result = await runAxe(['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'answer' });
    expect(lines(result.stderr)).toEqual([
      `Warning: ${dataDir} is writable by other users (mode 0777); another user could plant files there that axe trusts: chmod 700 ${dataDir}`,
    ]);
    expect(home.runIds()).toHaveLength(1);
    expect(modeOf(path.join(dataDir, 'memory', 'keeper.md'))).toBe(0o600);
  });
});
