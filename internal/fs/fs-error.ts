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
};

export function fsErrorReason(error: unknown): string {
  const { code, message } = (error ?? {}) as NodeJS.ErrnoException;
  return (code !== undefined ? REASONS[code] : undefined) ?? code ?? message ?? String(error);
}
