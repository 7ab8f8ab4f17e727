import { closeSync, writeSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { openWritableSync } from '../fs/open-writable.js';
import { UnreadableFileError } from '../fs/read-bounded.js';
import type { TextSink } from '../output/text-sink.js';
import { csvHeader, csvLine, jsonLine, type ResultLine } from './result-line.js';

export type OutFormat = 'jsonl' | 'csv';

export interface ResultSink {
  write(result: ResultLine): void;
  close(): void;
}

/**
 * Where a batch's result lines go: `stdout`, or `--out FILE` (0600: it holds the answers), made
 * anew and written a whole line per write(2), so a crash leaves complete lines only. A line that
 * cannot be written is thrown, never skipped in silence.
 */
export function openResultSink(out: string | undefined, format: OutFormat, stdout: TextSink): ResultSink {
  const render = format === 'csv' ? csvLine : jsonLine;
  if (out === undefined) {
    if (format === 'csv') stdout.write(csvHeader());
    return { write: (result) => stdout.write(render(result)), close: () => {} };
  }
  let fd: number;
  try {
    ({ fd } = openWritableSync(out, { mode: 0o600 }));
  } catch (error) {
    if (error instanceof UnreadableFileError) throw new ConfigError(`--out: ${out} ${error.message}`);
    throw new ConfigError(`--out: cannot write ${out} (${fsErrorReason(error)})`);
  }
  const writeWhole = (text: string) => {
    const bytes = Buffer.from(text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    } catch (error) {
      throw new ConfigError(`--out: cannot write ${out} (${fsErrorReason(error)})`);
    }
  };
  if (format === 'csv') writeWhole(csvHeader());
  return { write: (result) => writeWhole(render(result)), close: () => closeSync(fd) };
}
