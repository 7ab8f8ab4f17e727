import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { utf8Prefix } from '../text.js';

/**
 * For a file axe keeps for itself (a run's log, a code cache), not the user's data: replaced whole,
 * synchronously and (unless `durable`) without a flush to disk — a crashed process leaves the old content or the new,
 * a crashed machine may lose the last write. A few syscalls instead of a dozen awaited ones and two
 * fsyncs.
 */
export function replaceFileSync(
  target: string,
  data: string | Uint8Array,
  mode = 0o644,
  { durable = false }: { durable?: boolean } = {},
): void {
  const temp = tempPath(target);
  try {
    if (durable) writeSynced(temp, data, mode);
    else writeFileSync(temp, data, { flag: 'wx', mode });
    renameSync(temp, target);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
  if (durable) syncDirectorySync(dirname(target));
}

/** `durable`: the data reaches the disk before the rename makes it the file (a record that must not go back). */
function writeSynced(file: string, data: string | Uint8Array, mode: number): void {
  const fd = openSync(file, 'wx', mode);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** The rename itself, made durable; best effort (not every file system syncs a directory). */
function syncDirectorySync(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // EINVAL / EISDIR / EPERM on some file systems: the data itself is synced.
  }
}

/** Of a name in the temp file's: with the rest, within the 255 bytes a file name may have. */
const NAME_BYTES_KEPT = 200;

/** A temp file beside `target`; O_EXCL makes it safe whatever its randomness (no node:crypto). */
export function tempPath(target: string): string {
  const random = Math.floor(Math.random() * 2 ** 48).toString(16);
  return join(dirname(target), `.${shortened(basename(target))}.${process.pid}.${random}.tmp`);
}

function shortened(name: string): string {
  const bytes = Buffer.from(name, 'utf8');
  return bytes.length <= NAME_BYTES_KEPT ? name : utf8Prefix(bytes, NAME_BYTES_KEPT);
}
