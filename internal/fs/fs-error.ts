import { UnreadableFileError } from './read-bounded.js';

/** Words for a file system error code, for one-line messages: `permission denied`, not `EACCES`. */
const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENAMETOOLONG: 'file name too long',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  EMFILE: 'too many open files',
  EIO: 'input/output error',
  ENXIO: 'no such device or address',
};

export function fsErrorReason(error: unknown): string {
  const { code, message } = (error ?? {}) as NodeJS.ErrnoException;
  return (code !== undefined ? REASONS[code] : undefined) ?? code ?? message ?? String(error);
}

/**
 * What went wrong with `file`, in one line that names it: `<file> is a FIFO, not a regular file`,
 * `<file>: no space left on the device`; an error that is not the file system's, as it is.
 */
export function fileProblem(file: string, error: unknown): string {
  if (error instanceof UnreadableFileError) return `${file} ${error.message}`;
  const { code, syscall } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code === 'string' && typeof syscall === 'string') return `${file}: ${fsErrorReason(error)}`;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A file system error that reached the top as Node made it (`ENOTDIR: not a directory, scandir
 * '/x/runs'`) in words: `/x/runs: a part of the path is not a directory`; undefined for any other
 * error.
 */
export function systemErrorLine(error: unknown): string | undefined {
  const { code, syscall, path } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof code !== 'string' || typeof syscall !== 'string') return undefined;
  return path !== undefined
    ? `${path}: ${fsErrorReason(error)}`
    : `cannot ${syscall}: ${fsErrorReason(error)}`;
}
