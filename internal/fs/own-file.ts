import { closeSync, constants, fstatSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { readAll } from './read-all.js';
import { replaceFileSync } from './replace-file.js';

/**
 * A file axe keeps for itself (a code cache, the agent file cache), read only when it is a regular
 * file of this user's that nobody else may write and no larger than `maxBytes`: what is in it is
 * trusted as axe's own. Throws otherwise (for a FIFO at once). Read into `scratch` when it is
 * large enough (readAll).
 */
export function readOwnFileSync(
  file: string,
  { maxBytes = Number.POSITIVE_INFINITY, scratch }: { maxBytes?: number; scratch?: Buffer } = {},
): Buffer {
  // O_NONBLOCK: a FIFO in its place is refused below instead of waited on.
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    const ownedByUs = process.getuid === undefined || stats.uid === process.getuid();
    if (!stats.isFile() || !ownedByUs || (stats.mode & 0o022) !== 0 || stats.size > maxBytes) {
      throw new Error(`${file}: not axe's own file`);
    }
    return readAll(fd, stats.size, scratch);
  } finally {
    closeSync(fd);
  }
}

/** Writes such a file whole (replaceFileSync), owner-only, in an owner-only directory made if needed. */
export function writeOwnFileSync(file: string, data: string | Uint8Array): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  replaceFileSync(file, data, 0o600);
}
