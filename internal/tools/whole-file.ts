import type { BigIntStats, Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { readOpenFile } from '../fs/read-bounded.js';

/** Files larger than this are not loaded whole: read_file pages below it, edit_file edits below it. */
const MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * The bytes of a file a tool opened (see `openInSandbox`) and stat'ed (`info`), `directory` said
 * when it is one. A file larger than MAX_FILE_BYTES is refused, and no more than that is read
 * whatever size it claimed (a file that grows as it is read).
 */
export async function readWholeFile(
  handle: FileHandle,
  info: Stats | BigIntStats,
  shown: string,
  directory: string,
): Promise<Buffer> {
  if (info.isDirectory()) throw new Error(directory);
  const tooLarge = (size: number | bigint) =>
    new Error(`path "${shown}" is ${size} bytes, larger than the ${MAX_FILE_BYTES}-byte limit`);
  if (info.size > MAX_FILE_BYTES) throw tooLarge(info.size);
  return readOpenFile(handle, Number(info.size), MAX_FILE_BYTES, tooLarge);
}
