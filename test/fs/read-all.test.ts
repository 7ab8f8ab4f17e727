import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readAll } from '../../internal/fs/read-all.js';
import { tempDirForFile } from '../temp-dir.js';

describe('readAll', () => {
  const file = join(tempDirForFile('axe-read-all-'), 'data');
  writeFileSync(file, 'abcdefgh');
  const read = (size: number, scratch?: Buffer) => {
    const fd = openSync(file, 'r');
    try {
      return readAll(fd, size, scratch);
    } finally {
      closeSync(fd);
    }
  };

  it('reads into the scratch buffer when it is large enough, and stops where the file ends', () => {
    const scratch = Buffer.alloc(16, '0123456789ABCDEF'); // not from the shared pool
    const data = read(12, scratch);
    expect(data.toString()).toBe('abcdefgh');
    expect(data.buffer).toBe(scratch.buffer);
    expect(data.byteOffset).toBe(scratch.byteOffset);
  });

  it('takes a new buffer when the scratch one is too small, leaving it as it was', () => {
    const scratch = Buffer.alloc(4, '0123');
    const data = read(8, scratch);
    expect(data.toString()).toBe('abcdefgh');
    expect(data.buffer).not.toBe(scratch.buffer);
    expect(scratch.toString()).toBe('0123');
    expect(read(8).toString()).toBe('abcdefgh');
  });
});
