import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * For a file axe keeps for itself (a run's log, a code cache), not the user's data: replaced whole,
 * synchronously and without a flush to disk — a crashed process leaves the old content or the new,
 * a crashed machine may lose the last write. A few syscalls instead of a dozen awaited ones and two
 * fsyncs.
 */
export function replaceFileSync(target: string, data: string | Uint8Array, mode = 0o644): void {
  const temp = tempPath(target);
  try {
    writeFileSync(temp, data, { flag: 'wx', mode });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

/** A temp file beside `target`; O_EXCL makes it safe whatever its randomness (no node:crypto). */
export function tempPath(target: string): string {
  const random = Math.floor(Math.random() * 2 ** 48).toString(16);
  return join(dirname(target), `.${basename(target)}.${process.pid}.${random}.tmp`);
}
