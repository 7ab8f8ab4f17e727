import { type BigIntStats, constants, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsPromises } from './promises.js';
import { tempPath } from './replace-file.js';

export interface AtomicWriteOptions {
  /**
   * Mode of a new file (default 0o644, less the umask). An existing file keeps its mode, and its
   * owner where this process may give it (root); else it loses setuid and setgid, as a write by
   * another user makes it lose them.
   */
  mode?: number;
  /** Refuse (EEXIST) when the target exists, instead of replacing it. */
  exclusive?: boolean;
  /**
   * The target as it was read (an edit): if it is not that file any more, or was written since,
   * nothing is replaced and FileChangedError is thrown, so another writer's change is not lost.
   */
  unchangedSince?: FileStamp;
}

/** Which file, and which version of it: what a write between a read and a replace changes. */
export interface FileStamp {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

export function stampOf({ dev, ino, size, mtimeNs }: BigIntStats): FileStamp {
  return { dev, ino, size, mtimeNs };
}

export class FileChangedError extends Error {}

/**
 * Writes a whole file or nothing: the data goes to a temp file in the same directory, is flushed
 * to disk (fsync), then renamed over the target (or hard-linked to it with `exclusive`, which
 * never replaces an existing file). A full disk, a crash or a concurrent writer leaves either the
 * old content or the new one, never a cut or empty file; a failed write throws and leaves the
 * target untouched. Two concurrent writers: the last rename wins, and each file is complete.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { link, open, rename, unlink } = fsPromises();
  const dir = dirname(target);
  const existing = options.exclusive ? undefined : await statOf(target);
  const temp = tempPath(target);
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    options.mode ?? 0o644,
  );
  let placed = false;
  try {
    try {
      // writeFile loops until every byte is written, and throws on a short write (ENOSPC, EDQUOT).
      await handle.writeFile(data);
      if (existing) await keepOwnerAndMode(handle, existing);
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (options.exclusive) {
      await link(temp, target);
    } else {
      if (options.unchangedSince) await checkUnchanged(target, options.unchangedSince);
      await rename(temp, target);
      placed = true;
    }
  } finally {
    if (!placed) await unlink(temp).catch(() => {});
  }
  await syncDirectory(dir);
}

async function checkUnchanged(target: string, read: FileStamp): Promise<void> {
  const now = stampOf(await fsPromises().stat(target, { bigint: true }));
  if (
    now.dev !== read.dev ||
    now.ino !== read.ino ||
    now.size !== read.size ||
    now.mtimeNs !== read.mtimeNs
  ) {
    throw new FileChangedError(`${target} changed since it was read`);
  }
}

async function statOf(path: string): Promise<Stats | undefined> {
  try {
    return await fsPromises().stat(path);
  } catch {
    return undefined;
  }
}

/** The replaced file's owner (before the mode: a chown clears setuid) and mode, for its replacement. */
async function keepOwnerAndMode(handle: FileHandle, existing: Stats): Promise<void> {
  const owned = await handle.stat();
  let mode = existing.mode & 0o7777;
  if (owned.uid !== existing.uid || owned.gid !== existing.gid) {
    const given = await handle.chown(existing.uid, existing.gid).then(
      () => true,
      () => false,
    );
    // A setuid file of another user's that is now ours would run as us: not what it was.
    if (!given) mode &= ~0o6000;
  }
  await handle.chmod(mode);
}

/** Makes the rename itself durable. Best effort: not every file system lets a directory be synced. */
export async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await fsPromises().open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // EINVAL / EISDIR / EPERM on some file systems: the data itself is already synced.
  }
}
