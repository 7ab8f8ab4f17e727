import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replaceFileSync } from '../../internal/fs/replace-file.js';
import { writeFileAtomic } from '../../internal/fs/write-atomic.js';
import { skipBecause } from '../skip.js';
import { smallDisk } from './small-disk.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('writeFileAtomic', () => {
  it('writes a new file and replaces an existing one, keeping its mode', async () => {
    const file = path.join(dir, 'a.txt');
    await writeFileAtomic(file, 'first');
    expect(readFileSync(file, 'utf8')).toBe('first');
    chmodSync(file, 0o600);
    await writeFileAtomic(file, 'second');
    expect(readFileSync(file, 'utf8')).toBe('second');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('as root, a replaced file keeps its owner and then its whole mode (a chown clears setuid)', async (context) => {
    if (process.getuid?.() !== 0)
      return skipBecause(context, 'gives a file to another owner, which needs root');
    const file = path.join(dir, 'tool');
    writeFileSync(file, 'old');
    chownSync(file, 65534, 65534);
    chmodSync(file, 0o4755);
    await writeFileAtomic(file, 'new');
    const stats = statSync(file);
    expect([stats.uid, stats.gid, stats.mode & 0o7777]).toEqual([65534, 65534, 0o4755]);
    expect(readFileSync(file, 'utf8')).toBe('new');
  });

  it('writes a file whose name takes the 255 bytes a name may have (its temp file has a shorter one)', async () => {
    for (const name of ['n'.repeat(255), `${'é'.repeat(127)}x`]) {
      const file = path.join(dir, name);
      await writeFileAtomic(file, 'long');
      await writeFileAtomic(file, 'longer');
      expect(readFileSync(file, 'utf8')).toBe('longer');
      replaceFileSync(file, 'log');
      expect(readFileSync(file, 'utf8')).toBe('log');
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('gives a new file the requested mode', async () => {
    const file = path.join(dir, 'secret.toml');
    await writeFileAtomic(file, 'key', { mode: 0o600 });
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('exclusive: never replaces an existing file', async () => {
    const file = path.join(dir, 'once.txt');
    await writeFileAtomic(file, 'mine', { exclusive: true });
    await expect(writeFileAtomic(file, 'theirs', { exclusive: true })).rejects.toMatchObject({
      code: 'EEXIST',
    });
    expect(readFileSync(file, 'utf8')).toBe('mine');
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('concurrent writers: the file is always one whole version', async () => {
    const file = path.join(dir, 'race.txt');
    const versions = Array.from({ length: 20 }, (_, i) => String(i).repeat(50_000));
    await Promise.all(versions.map((v) => writeFileAtomic(file, v)));
    expect(versions).toContain(readFileSync(file, 'utf8'));
  });

  it('a full disk throws ENOSPC and leaves the old file whole, with no temp file behind', async (context) => {
    const disk = smallDisk('64k');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const file = path.join(disk.root, 'kept.txt');
      writeFileSync(file, 'old content');
      await expect(writeFileAtomic(file, Buffer.alloc(1024 * 1024, 1))).rejects.toMatchObject({
        code: 'ENOSPC',
      });
      expect(readFileSync(file, 'utf8')).toBe('old content');
      expect(readdirSync(disk.root)).toEqual(['kept.txt']);
    } finally {
      disk.unmount();
    }
  });

  it('fails when the directory is missing, creating nothing', async () => {
    const file = path.join(dir, 'no', 'such', 'dir.txt');
    await expect(writeFileAtomic(file, 'x')).rejects.toMatchObject({ code: 'ENOENT' });
    mkdirSync(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, 'x');
    expect(readFileSync(file, 'utf8')).toBe('x');
  });
});

describe('replaceFileSync (logs: whole or absent, no flush)', () => {
  it('replaces a file whole and leaves no temp file; a failed rename leaves the target and no temp', () => {
    const sub = path.join(dir, 'log');
    mkdirSync(sub);
    const file = path.join(sub, 'run.json');
    replaceFileSync(file, 'one');
    replaceFileSync(file, 'two');
    expect(readFileSync(file, 'utf8')).toBe('two');
    expect(readdirSync(sub)).toEqual(['run.json']);
    const blocked = path.join(sub, 'blocked');
    mkdirSync(path.join(blocked, 'inside'), { recursive: true });
    expect(() => replaceFileSync(blocked, 'x')).toThrow();
    expect(readdirSync(sub).sort()).toEqual(['blocked', 'run.json']);
  });

  it('a full disk throws and keeps the old content', (context) => {
    const disk = smallDisk('64k');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const file = path.join(disk.root, 'kept.json');
      writeFileSync(file, 'old content');
      expect(() => replaceFileSync(file, 'x'.repeat(1024 * 1024))).toThrow(/ENOSPC/);
      expect(readFileSync(file, 'utf8')).toBe('old content');
      expect(readdirSync(disk.root)).toEqual(['kept.json']);
    } finally {
      disk.unmount();
    }
  });
});
