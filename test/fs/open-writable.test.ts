import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NonBlockingWriter } from '../../internal/fs/non-blocking-writer.js';
import { openWritableSync } from '../../internal/fs/open-writable.js';
import { UnreadableFileError } from '../../internal/fs/read-bounded.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MiB = 2 ** 20;

function refusal(file: string, pipes: boolean): string {
  try {
    closeSync(openWritableSync(file, { mode: 0o600, pipes }).fd);
  } catch (error) {
    expect(error).toBeInstanceOf(UnreadableFileError);
    return (error as Error).message;
  }
  throw new Error(`${file} was opened`);
}

describe('openWritableSync', () => {
  it('creates a regular file with exactly its mode; a FIFO nobody reads, a socket, a device refused at once', async () => {
    const file = path.join(dir, 'new.jsonl');
    const { fd, kind } = openWritableSync(file, { mode: 0o600 });
    closeSync(fd);
    expect(kind).toBe('file');
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const fifo = path.join(dir, 'nobody.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(refusal(fifo, true)).toBe('is a FIFO nobody reads');
    expect(refusal('/dev/null', false)).toBe('is a character device, not a regular file');

    const socket = path.join(dir, 'server.sock');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    try {
      expect(refusal(socket, true)).toBe('is a socket, not a regular file');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('NonBlockingWriter', () => {
  it('a reader that stopped reading: writes never block; past 4 MiB waiting, writing stops, said once', () => {
    const fifo = path.join(dir, 'stalled.fifo');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const { fd, kind } = openWritableSync(fifo, { mode: 0o600, pipes: true });
      expect(kind).toBe('pipe');
      const said: string[] = [];
      const writer = new NonBlockingWriter(fd, (why) => said.push(why));
      for (let i = 0; i < 6; i++) writer.write(Buffer.alloc(MiB, 'x'));
      expect(said).toEqual([expect.stringMatching(/^its reader stopped reading: \d+ bytes were waiting$/)]);
      writer.close();
      expect(said).toHaveLength(1);
    } finally {
      closeSync(reader);
    }
  });

  it('a regular file gets every byte; a write error (/dev/full) stops writing with the reason', () => {
    const file = path.join(dir, 'all.txt');
    const out = new NonBlockingWriter(openWritableSync(file, { mode: 0o600 }).fd, () => {
      throw new Error('no stop expected');
    });
    for (let i = 0; i < 6; i++) out.write(Buffer.alloc(MiB, String(i)));
    out.close();
    expect(readFileSync(file).length).toBe(6 * MiB);

    // One write larger than what may wait (a tool's 9 MB output in an event) is no stalled reader.
    const large = path.join(dir, 'large.txt');
    const whole = new NonBlockingWriter(openWritableSync(large, { mode: 0o600 }).fd, (why) => {
      throw new Error(`no stop expected: ${why}`);
    });
    whole.write(Buffer.alloc(5 * MiB, 'a'));
    whole.write(Buffer.from('next\n'));
    whole.close();
    expect(readFileSync(large).length).toBe(5 * MiB + 5);

    const said: string[] = [];
    const full = new NonBlockingWriter(
      openWritableSync('/dev/full', { mode: 0o600, pipes: true }).fd,
      (why) => said.push(why),
    );
    full.write(Buffer.from('a line\n'));
    full.write(Buffer.from('another\n'));
    full.close();
    expect(said).toEqual(['no space left on the device']);
  });
});
