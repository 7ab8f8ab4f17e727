import { fstatSync } from 'node:fs';

/** `fd` is a regular file, or a pipe or socket (`pipe`); undefined for anything else, or closed. */
export function fdKind(fd: number): 'file' | 'pipe' | undefined {
  try {
    const stats = fstatSync(fd);
    return stats.isFile() ? 'file' : stats.isFIFO() || stats.isSocket() ? 'pipe' : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `fd` is a terminal; a file or pipe is told by fstat, without loading node:tty (and net). */
export function isTerminal(fd: number): boolean {
  try {
    if (!fstatSync(fd).isCharacterDevice()) return false;
  } catch {
    return false;
  }
  return process.getBuiltinModule('node:tty').isatty(fd);
}
