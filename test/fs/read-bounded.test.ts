import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  readRegularFile as readAsync,
  readRegularFileSync,
  UnreadableFileError,
} from '../../internal/fs/read-bounded.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const variants = [
  ['readRegularFile', readAsync],
  // The same contract, synchronously.
  ['readRegularFileSync', async (file: string, maxBytes: number) => readRegularFileSync(file, maxBytes)],
] as const;

describe.each(variants)('%s', (_name, readRegularFile) => {
  async function failure(file: string, maxBytes = 1024): Promise<UnreadableFileError> {
    const error = await readRegularFile(file, maxBytes).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UnreadableFileError);
    return error as UnreadableFileError;
  }

  it('reads a regular file up to and including the cap, through a symlink too', async () => {
    const file = path.join(dir, `exact-${_name}.txt`);
    writeFileSync(file, 'x'.repeat(100));
    expect((await readRegularFile(file, 100)).toString()).toBe('x'.repeat(100));
    symlinkSync(file, path.join(dir, `link-${_name}.txt`));
    expect((await readRegularFile(path.join(dir, `link-${_name}.txt`), 100)).length).toBe(100);
  });

  it('refuses a file over the cap without reading it', async () => {
    const file = path.join(dir, `big-${_name}.txt`);
    writeFileSync(file, 'x'.repeat(101));
    const error = await failure(file, 100);
    expect(error.reason).toBe('too-large');
    expect(error.message).toBe('is larger than 100 bytes');
  });

  it('refuses a FIFO at once instead of blocking on open', async () => {
    const fifo = path.join(dir, `pipe-${_name}`);
    execFileSync('mkfifo', [fifo]);
    const error = await failure(fifo);
    expect(error.reason).toBe('not-regular');
    expect(error.message).toBe('is a FIFO, not a regular file');
  });

  it('refuses devices and directories by name', async () => {
    expect((await failure('/dev/zero')).message).toBe('is a character device, not a regular file');
    expect((await failure(dir)).message).toBe('is a directory, not a regular file');
  });

  it('leaves file-system errors to the caller', async () => {
    await expect(readRegularFile(path.join(dir, 'missing'), 10)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reads a file whose stated size is 0 (a /proc file) whole, and stops one byte over the cap', async () => {
    const status = (await readRegularFile('/proc/self/status', 1024 * 1024)).toString();
    expect(status).toMatch(/^Name:/);
    expect(status).toMatch(/\nPid:/);
    expect((await failure('/proc/self/status', 20)).reason).toBe('too-large');
  });
});
