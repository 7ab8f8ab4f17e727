import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appendEntry, countEntries, formatEntry, newestEntries } from '../../internal/memory/memory.js';

const AT = new Date(Date.UTC(2026, 10, 24, 9, 5, 7, 123));

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
});
