import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLines } from '../../internal/fs/read-lines.js';
import { tempDirForFile } from '../temp-dir.js';

const dir = tempDirForFile('axe-lines-');

async function linesOf(file: string, maxLineBytes: number): Promise<[string, number][]> {
  const seen: [string, number][] = [];
  await readLines(file, maxLineBytes, (line, number) => seen.push([line, number]));
  return seen;
}

describe('readLines', () => {
  it('gives every line whole, also across reads (lines of 1.5 MiB) and a last one without its newline', async () => {
    const long = 'é'.repeat(786_432);
    const file = join(dir, 'lines.jsonl');
    writeFileSync(file, `a\n${long}\n\nb${long}\nlast`);
    expect(await linesOf(file, 4 * 2 ** 20)).toEqual([
      ['a', 1],
      [long, 2],
      ['', 3],
      [`b${long}`, 4],
      ['last', 5],
    ]);
  });

  it('refuses a line over the bound, naming it; a FIFO is refused, not waited on', async () => {
    const file = join(dir, 'long.jsonl');
    writeFileSync(file, `short\n${'x'.repeat(2049)}\n`);
    await expect(linesOf(file, 2048)).rejects.toThrow('has a line larger than 2 KiB');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await expect(linesOf(fifo, 2048)).rejects.toThrow('is a FIFO, not a regular file');
  });
});
