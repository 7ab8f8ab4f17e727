import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { openAppendable } from '../fs/open-writable.js';
import { fsPromises } from '../fs/promises.js';
import { readLines } from '../fs/read-lines.js';
import { isPlainObject } from '../plain-object.js';
import { maskSecrets } from '../secrets.js';
import type { ResultLine } from './result-line.js';
import { FILE_MODE } from './store.js';

export const JOURNAL_FILE = 'journal.jsonl';
const JOURNAL_LINE_MAX = 256 * 1024 * 1024;

/**
 * A batch's journal: one line per finished item, appended, and on disk (fsync) before the promise
 * of its `append` resolves, so an item whose output line went out is never run again. Lines that
 * finish together share one write and one fsync.
 */
export class Journal {
  private queue: { text: string; done: () => void; failed: (error: Error) => void }[] = [];
  private flushing: Promise<void> | undefined;

  private constructor(
    private readonly handle: FileHandle,
    private readonly file: string,
  ) {}

  /** Opens (or creates) `<batch dir>/journal.jsonl` for appending; a line a crash cut short is ended first. */
  static async open(batchDir: string): Promise<Journal> {
    const file = join(batchDir, JOURNAL_FILE);
    try {
      const handle = await openAppendable(file, FILE_MODE);
      const { size } = await handle.stat();
      if (size > 0) {
        const last = Buffer.alloc(1);
        const read = await fsPromises().open(file, 'r');
        try {
          await read.read(last, 0, 1, size - 1);
        } finally {
          await read.close();
        }
        if (last[0] !== 10) await handle.write('\n');
      }
      return new Journal(handle, file);
    } catch (error) {
      throw new ConfigError(`batch journal: cannot write ${file} (${fsErrorReason(error)})`);
    }
  }

  append(entry: ResultLine): Promise<void> {
    return new Promise((done, failed) => {
      // Masked as every output of axe: an answer that echoes a key does not keep it on disk.
      this.queue.push({ text: `${maskSecrets(JSON.stringify(entry))}\n`, done, failed });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        await this.handle.write(batch.map((entry) => entry.text).join(''));
        await this.handle.datasync();
        for (const entry of batch) entry.done();
      } catch (error) {
        const failure = new Error(`cannot write ${this.file} (${fsErrorReason(error)})`);
        for (const entry of batch) entry.failed(failure);
      }
    }
    this.flushing = undefined;
  }

  async close(): Promise<void> {
    await this.flushing;
    await this.handle.close();
  }
}

/**
 * The journaled result of each item, by line: the last one of a line counts (`--retry-failed`
 * journals a new result after a failed one). A line a crash cut short is skipped.
 */
export async function readJournal(batchDir: string): Promise<Map<number, ResultLine>> {
  const results = new Map<number, ResultLine>();
  try {
    await readLines(join(batchDir, JOURNAL_FILE), JOURNAL_LINE_MAX, (text) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return;
      }
      if (isPlainObject(value) && typeof value.line === 'number' && typeof value.status === 'string') {
        results.set(value.line, value as unknown as ResultLine);
      }
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return results;
    throw new ConfigError(
      `batch journal: cannot read ${join(batchDir, JOURNAL_FILE)} (${fsErrorReason(error)})`,
    );
  }
  return results;
}
