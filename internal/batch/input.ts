import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { extname } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { describeFileType } from '../fs/read-bounded.js';
import { isPlainObject } from '../plain-object.js';
import type { JsonValue } from '../provider/types.js';

/** How a `--map` file holds its items. */
export type MapFormat = 'jsonl' | 'csv' | 'tsv' | 'lines';

export const MAP_FORMATS: readonly MapFormat[] = ['jsonl', 'csv', 'tsv', 'lines'];

/**
 * One item as read: its line (1-based; a CSV record that spans lines: where it ends), and its
 * fields (JSONL, CSV/TSV) or its text (`lines`), or why it could not be read (with the fields it
 * has, which may still name it).
 */
export interface RawItem {
  line: number;
  fields?: Record<string, JsonValue>;
  text?: string;
  error?: string;
}

/** `--map-format`, else the file's extension; `-` (stdin) and anything else unknown: an error naming the flag. */
export function mapFormat(file: string, flag: string | undefined): MapFormat {
  if (flag !== undefined) {
    if ((MAP_FORMATS as readonly string[]).includes(flag)) return flag as MapFormat;
    throw new ConfigError(`--map-format: expected one of ${MAP_FORMATS.join(', ')}, got "${flag}"`);
  }
  const byExtension: Record<string, MapFormat> = {
    '.jsonl': 'jsonl',
    '.ndjson': 'jsonl',
    '.csv': 'csv',
    '.tsv': 'tsv',
    '.txt': 'lines',
  };
  const format = byExtension[extname(file).toLowerCase()];
  if (format === undefined) {
    throw new ConfigError(
      `--map: cannot tell the format of ${file === '-' ? 'stdin' : file} from its name: add --map-format ${MAP_FORMATS.join('|')}`,
    );
  }
  return format;
}

/** The input file, opened without blocking (a FIFO is refused) and checked to be a regular file. */
async function openInput(file: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await fsPromises().open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new ConfigError(`--map: cannot read ${file} (${fsErrorReason(error)})`);
  }
  const stats = await handle.stat();
  if (!stats.isFile()) {
    await handle.close();
    throw new ConfigError(`--map: ${file} is ${describeFileType(stats)}, not a regular file`);
  }
  return handle;
}

/**
 * Every item of the file, in order, read as it goes (nothing is kept of an item once it is
 * handed on); `digest`, when given, is fed every byte of the file.
 */
export async function* readItems(file: string, format: MapFormat, digest?: Hash): AsyncGenerator<RawItem> {
  const handle = await openInput(file);
  try {
    const stream = handle.createReadStream({ autoClose: false });
    if (digest) stream.on('data', (chunk) => digest.update(chunk));
    if (format === 'csv' || format === 'tsv') yield* csvItems(stream, format === 'tsv' ? '\t' : ',');
    else yield* lineItems(stream, format);
  } finally {
    await handle.close();
  }
}

/** The SHA-256 of a file, read as a stream. */
export async function inputDigest(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const _ of readItems(file, 'lines', hash)) {
    // The items are not needed: reading them feeds the hash.
  }
  return hash.digest('hex');
}

async function* lineItems(stream: NodeJS.ReadableStream, format: 'jsonl' | 'lines'): AsyncGenerator<RawItem> {
  const { createInterface } = await import('node:readline');
  let line = 0;
  for await (const raw of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
    line++;
    const text = raw.trim();
    if (text === '') continue;
    if (format === 'lines') {
      yield { line, text };
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line, error: `line ${line}: not valid JSON` };
      continue;
    }
    if (!isPlainObject(value)) yield { line, error: `line ${line}: expected a JSON object` };
    else yield { line, fields: value as Record<string, JsonValue> };
  }
}

/**
 * CSV (RFC 4180) or TSV with a header row: each record's columns by the header's names. A record
 * with another number of columns, or one the parser cannot read (a stray quote), is that item's error.
 */
async function* csvItems(stream: NodeJS.ReadableStream, delimiter: string): AsyncGenerator<RawItem> {
  const { parse } = await import('csv-parse');
  const skipped: RawItem[] = [];
  const parser = stream.pipe(
    parse({
      delimiter,
      info: true,
      relax_column_count: true,
      skip_empty_lines: true,
      skip_records_with_error: true,
      bom: true,
      on_skip: (error) => {
        const line = typeof error?.lines === 'number' ? error.lines : 0;
        skipped.push({ line, error: `line ${line}: ${error?.message ?? 'not a valid record'}` });
        return undefined;
      },
    }),
  );
  let header: string[] | undefined;
  for await (const { record, info } of parser as AsyncIterable<{
    record: string[];
    info: { lines: number };
  }>) {
    yield* skipped.splice(0);
    if (header === undefined) {
      header = record;
      continue;
    }
    const fields: Record<string, JsonValue> = {};
    for (const [index, name] of header.entries())
      if (index < record.length) fields[name] = record[index] ?? '';
    if (record.length !== header.length) {
      // The columns it has still name it (`--key`).
      const error = `line ${info.lines}: ${record.length} columns, the header has ${header.length}`;
      yield { line: info.lines, fields, error };
      continue;
    }
    yield { line: info.lines, fields };
  }
  yield* skipped.splice(0);
}
