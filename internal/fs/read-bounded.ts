import type { BigIntStats, Stats } from 'node:fs';
import { closeSync, constants, fstatSync, openSync, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { fsPromises } from './promises.js';
import { readAll } from './read-all.js';

/**
 * Reading a file a user named (an agent file, config.toml, a skill, a context file, a cassette)
 * must never hang and never take unbounded memory: a FIFO blocks `open`, `/dev/zero` never ends,
 * a 2 GB log fills the heap. So only regular files are read, and at most `maxBytes` of them.
 */
export class UnreadableFileError extends Error {
  constructor(
    readonly path: string,
    readonly reason: 'not-regular' | 'too-large',
    message: string,
  ) {
    super(message);
    this.name = 'UnreadableFileError';
  }
}

/** 'a directory', 'a FIFO', 'a character device', … for an error message. */
export function describeFileType(stats: Stats | BigIntStats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  return stats.isFile() ? 'a regular file' : 'not a regular file';
}

/** `1048576` → `1 MiB`, for the size caps in messages. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 2 ** 30],
    ['MiB', 2 ** 20],
    ['KiB', 2 ** 10],
  ] as const) {
    if (bytes >= size && bytes % size === 0) return `${bytes / size} ${unit}`;
  }
  return `${bytes} bytes`;
}

/**
 * The bytes of a regular file (symlinks followed), at most `maxBytes`. Throws UnreadableFileError
 * for anything else (a directory, FIFO, device, socket) or a larger file; errors of the file
 * system (ENOENT, EACCES, …) are thrown as they are, for the caller to word.
 *
 * The type is checked before opening, and the file is opened non-blocking and checked again, so a
 * FIFO swapped in between never blocks; the read stops at `maxBytes + 1` bytes whatever the size
 * the file claims (a file that grows while it is read, /proc files).
 */
export async function readRegularFile(path: string, maxBytes: number): Promise<Buffer> {
  const { open, stat } = fsPromises();
  checkRegular(path, await stat(path), maxBytes);
  const handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    checkRegular(path, stats, maxBytes);
    return await readOpenFile(handle, stats.size, maxBytes, () => tooLarge(path, maxBytes));
  } finally {
    await handle.close();
  }
}

/**
 * The rest of an open file, at most `maxBytes`: `tooLarge(bytesRead)` is thrown past them,
 * whatever size the file claimed (`size`; a file that grows while it is read, /proc files). One
 * read when the file is that size: a byte more is asked to see that it ends there.
 */
export async function readOpenFile(
  handle: FileHandle,
  size: number,
  maxBytes: number,
  tooLarge: (bytesRead: number) => Error,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (let room = Math.min(size, maxBytes) + 1; ; room = 64 * 1024) {
    const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(room), 0, room, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > maxBytes) throw tooLarge(total);
    chunks.push(buffer.subarray(0, bytesRead));
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/**
 * `readRegularFile` in one go, for the small files a command reads by the dozen before it can
 * start (agent files): a few syscalls each instead of six round trips through the thread pool.
 * The same checks; a FIFO or a device is refused before it is read, so nothing blocks.
 */
export function readRegularFileSync(path: string, maxBytes: number): Buffer {
  checkRegular(path, statSync(path), maxBytes);
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    checkRegular(path, stats, maxBytes);
    // Up to one byte over the cap, whatever size the file claims: a file that grew (or a /proc
    // file, which claims 0) is read on to the cap, and one over it is caught.
    const limit = maxBytes + 1;
    const first = readAll(fd, Math.min(limit, stats.size + 1));
    const data =
      first.length > stats.size && first.length < limit
        ? Buffer.concat([first, readAll(fd, limit - first.length)])
        : first;
    if (data.length > maxBytes) throw tooLarge(path, maxBytes);
    return data;
  } finally {
    closeSync(fd);
  }
}

function checkRegular(path: string, stats: Stats, maxBytes: number): void {
  if (!stats.isFile()) {
    throw new UnreadableFileError(path, 'not-regular', `is ${describeFileType(stats)}, not a regular file`);
  }
  if (stats.size > maxBytes) throw tooLarge(path, maxBytes);
}

function tooLarge(path: string, maxBytes: number): UnreadableFileError {
  return new UnreadableFileError(path, 'too-large', `is larger than ${formatBytes(maxBytes)}`);
}
