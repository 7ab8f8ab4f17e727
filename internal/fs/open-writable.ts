import { closeSync, constants, fstatSync, openSync, type Stats, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { fsPromises } from './promises.js';
import { describeFileType, UnreadableFileError } from './read-bounded.js';

/**
 * Opening a file a user named, or one in the data directory, for writing must never wait: open(2)
 * of a FIFO with no reader blocks until one comes (on the main thread: Ctrl-C and the deadline are
 * never heard; in the thread pool: the process cannot exit). So every such open is non-blocking
 * (a FIFO nobody reads fails at once with ENXIO, as a socket does), and what was opened is checked
 * before anything is written: a regular file, or (where the caller takes one) a pipe or a
 * character device, whose writes then fail with EAGAIN instead of blocking.
 */
export type WriteKind = 'file' | 'pipe';

export interface WritableFile {
  fd: number;
  /** 'pipe' for a FIFO or a character device (a terminal, /dev/null): written non-blocking. */
  kind: WriteKind;
}

/**
 * Opens `path` for writing, created with `mode` when missing (exactly that mode: the umask can
 * only take bits away), truncated unless `append`. Throws UnreadableFileError (reason
 * 'not-regular', a message such as `is a FIFO nobody reads`) for what cannot be written here;
 * errors of the file system as they are.
 */
export function openWritableSync(
  path: string,
  { mode, append = false, pipes = false }: { mode: number; append?: boolean; pipes?: boolean },
): WritableFile {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NONBLOCK |
    (append ? constants.O_APPEND : constants.O_TRUNC);
  let fd: number;
  try {
    fd = openSync(path, flags, mode);
  } catch (error) {
    throw notOpenable(path, error, isNoReader(error) ? statIfAny(path) : undefined);
  }
  try {
    return { fd, kind: writeKind(path, fstatSync(fd), pipes) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `openWritableSync` for appending to a regular file (a memory log), as a FileHandle. */
export async function openAppendable(path: string, mode: number): Promise<FileHandle> {
  const { open, stat } = fsPromises();
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NONBLOCK;
  let handle: FileHandle;
  try {
    handle = await open(path, flags, mode);
  } catch (error) {
    throw notOpenable(path, error, isNoReader(error) ? await stat(path).catch(() => undefined) : undefined);
  }
  try {
    writeKind(path, await handle.stat(), false);
    return handle;
  } catch (error) {
    await handle.close();
    throw error;
  }
}

function writeKind(path: string, stats: Stats, pipes: boolean): WriteKind {
  if (stats.isFile()) return 'file';
  if (pipes && (stats.isFIFO() || stats.isCharacterDevice())) return 'pipe';
  throw new UnreadableFileError(path, 'not-regular', `is ${describeFileType(stats)}, not a regular file`);
}

function isNoReader(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENXIO';
}

function statIfAny(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** ENXIO (a FIFO nobody reads, or a socket) said in words; other errors as the file system said them. */
function notOpenable(path: string, error: unknown, stats: Stats | undefined): unknown {
  if (!isNoReader(error)) return error;
  const what = stats?.isFIFO()
    ? 'a FIFO nobody reads'
    : stats !== undefined
      ? `${describeFileType(stats)}, not a regular file`
      : 'not a file that can be written (no device or address)';
  return new UnreadableFileError(path, 'not-regular', `is ${what}`);
}
