import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { withFileLock } from '../../internal/memory/file-lock.js';
import { appendEntry, countEntries, formatEntry, newestEntries } from '../../internal/memory/memory.js';
import { smallDisk } from '../fs/small-disk.js';
import { skipBecause } from '../skip.js';

const AT = new Date(Date.UTC(2026, 10, 24, 9, 5, 7, 123));

/** Fills a small disk to the last page with `<root>/filler`; its path. */
function fill(root: string): string {
  const filler = path.join(root, 'filler');
  try {
    writeFileSync(filler, Buffer.alloc(1024 * 1024));
  } catch (error) {
    expect(error).toMatchObject({ code: 'ENOSPC' });
  }
  return filler;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('memory entries, as Go axe writes and reads them', () => {
  it('formats an entry: UTC RFC 3339 to the second, task on one line, result cut at 1000 bytes', () => {
    expect(formatEntry(AT, 'review\nthis diff', 'looks good').toString()).toBe(
      '## 2026-11-24T09:05:07Z\n**Task:** review this diff\n**Result:** looks good\n\n',
    );
    expect(formatEntry(AT, '', '').toString()).toBe(
      '## 2026-11-24T09:05:07Z\n**Task:** (none)\n**Result:** (none)\n\n',
    );
    // 999 ASCII bytes then a 3-byte character: the cut falls inside it, as Go's byte slice does.
    const long = `${'a'.repeat(999)}€tail`;
    const entry = formatEntry(AT, 't', long);
    const result = entry.subarray(entry.indexOf('**Result:** ') + '**Result:** '.length);
    expect(result).toEqual(Buffer.concat([Buffer.from(long).subarray(0, 1000), Buffer.from('...\n\n')]));
  });

  it('selects the newest last_n entries (0 = the whole log) and counts `## ` lines', () => {
    const log = `preamble\n${['one', 'two', 'three']
      .map((task) => formatEntry(AT, task, `did ${task}`).toString())
      .join('')}`;
    expect(countEntries(log)).toBe(3);
    expect(newestEntries(log, 0)).toBe(log);
    expect(newestEntries(log, 2)).toBe(log.slice(log.indexOf('## ', log.indexOf('**Task:** one'))));
    expect(newestEntries(log, 5)).toBe(log.slice(log.indexOf('## ')));
    expect(newestEntries('no entries here\n', 3)).toBe('');
    expect(newestEntries('', 3)).toBe('');
  });
});

describe('the memory file lock', () => {
  it('breaks a lock left by a process that is gone, and removes its own', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    const gone = spawnSync(process.execPath, ['-e', '0']).pid;
    writeFileSync(`${file}.lock`, `${gone}\n`);
    await appendEntry(file, formatEntry(AT, 'after a crash', 'kept'));
    expect(readFileSync(file, 'utf8')).toContain('**Task:** after a crash');
    expect(existsSync(`${file}.lock`)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('breaks a lock with our own pid that this process does not hold (a restarted container)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    writeFileSync(`${file}.lock`, `${process.pid}\n`);
    await appendEntry(file, formatEntry(AT, 'same pid', 'kept'));
    expect(countEntries(readFileSync(file, 'utf8'))).toBe(1);
    expect(existsSync(`${file}.lock`)).toBe(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it('breaks a lock far older than any append even when its pid is alive (pid reuse)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    writeFileSync(`${file}.lock`, `${process.ppid}\n`);
    const old = new Date(Date.now() - 120_000);
    utimesSync(`${file}.lock`, old, old);
    await appendEntry(file, formatEntry(AT, 'reused pid', 'kept'));
    expect(countEntries(readFileSync(file, 'utf8'))).toBe(1);
    rmSync(dir, { recursive: true, force: true });
  });

  it('waits on a fresh lock of a live process, and on one another call of this process holds', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    writeFileSync(`${file}.lock`, `${process.ppid}\n`);
    const append = appendEntry(file, formatEntry(AT, 'waited', 'kept'));
    await sleep(50);
    expect(existsSync(file)).toBe(false);
    unlinkSync(`${file}.lock`);
    await append;
    expect(countEntries(readFileSync(file, 'utf8'))).toBe(1);

    const order: string[] = [];
    let second: Promise<void> = Promise.resolve();
    await withFileLock(file, async () => {
      second = withFileLock(file, async () => {
        order.push('second');
      });
      await sleep(50);
      order.push('first');
    });
    await second;
    expect(order).toEqual(['first', 'second']);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops waiting for a live lock when the run is cancelled, leaving the lock and the log alone', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    writeFileSync(`${file}.lock`, `${process.ppid}\n`);
    const controller = new AbortController();
    const append = appendEntry(file, formatEntry(AT, 'cancelled', 'not kept'), controller.signal);
    await sleep(50);
    controller.abort(new Error('cancelled (Ctrl-C)'));
    // The abort's own reason, not the give-up after the 10 s a lock is waited on.
    await expect(append).rejects.toThrow('cancelled (Ctrl-C)');
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(`${file}.lock`, 'utf8')).toBe(`${process.ppid}\n`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('never removes a lock that replaced the stale one it judged, even on the same inode', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'axe-lock-'));
    const file = path.join(dir, 'agent.md');
    const lock = `${file}.lock`;
    writeFileSync(lock, `${spawnSync(process.execPath, ['-e', '0']).pid}\n`);
    const fs = process.getBuiltinModule('node:fs/promises');
    const open = fs.open;
    let looks = 0;
    // Between the judgement and the removal, a new owner takes the lock on the same inode.
    const spy = vi.spyOn(fs, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      if (args[0] === lock && args[1] !== 'wx' && ++looks === 2) writeFileSync(lock, `${process.ppid} new\n`);
      return open(...args);
    });
    try {
      const append = appendEntry(file, formatEntry(AT, 'after the new owner', 'kept'));
      await sleep(50);
      expect(readFileSync(lock, 'utf8')).toBe(`${process.ppid} new\n`);
      expect(existsSync(file)).toBe(false);
      unlinkSync(lock);
      await append;
      expect(countEntries(readFileSync(file, 'utf8'))).toBe(1);
    } finally {
      spy.mockRestore();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('memory on a full disk', () => {
  it('a failed append leaves the log as it was, so the next entry still reads as one', async (context) => {
    const disk = smallDisk('64k');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const file = path.join(disk.root, 'agent.md');
      const first = formatEntry(AT, 'first', 'ok');
      writeFileSync(file, first);
      const filler = fill(disk.root);
      // Three pages free: one for the lock, two for a part of the entry.
      truncateSync(filler, statSync(filler).size - 3 * 4096);
      await expect(appendEntry(file, formatEntry(AT, 'x'.repeat(20_000), 'lost'))).rejects.toThrow(
        `${file}: no space left on the device`,
      );
      expect(readFileSync(file)).toEqual(first);
      expect(existsSync(`${file}.lock`)).toBe(false);
      unlinkSync(filler);
      const next = formatEntry(AT, 'next', 'ok');
      await appendEntry(file, next);
      expect(readFileSync(file)).toEqual(Buffer.concat([first, next]));
      expect(countEntries(readFileSync(file, 'utf8'))).toBe(2);
    } finally {
      disk.unmount();
    }
  });

  it('a lock whose pid cannot be written is removed, so the next run does not wait on it', async (context) => {
    const disk = smallDisk('64k');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const file = path.join(disk.root, 'agent.md');
      writeFileSync(file, formatEntry(AT, 'first', 'ok'));
      const filler = fill(disk.root);
      await expect(appendEntry(file, formatEntry(AT, 'lost', 'lost'))).rejects.toThrow(
        `${file}: no space left on the device`,
      );
      expect(existsSync(`${file}.lock`)).toBe(false);
      unlinkSync(filler);
      await appendEntry(file, formatEntry(AT, 'next', 'ok'));
      expect(countEntries(readFileSync(file, 'utf8'))).toBe(2);
    } finally {
      disk.unmount();
    }
  });
});
