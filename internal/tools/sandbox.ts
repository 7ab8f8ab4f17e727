import { constants, existsSync } from 'node:fs';
import { type FileHandle, lstat, open, readlink, realpath, stat, unlink } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The workdir sandbox of the file tools. A path is checked in two steps:
 *   1. `resolveInSandbox` resolves it against the workdir's real path, following every existing
 *      symlink, and refuses absolute paths and anything that ends up outside (`..`, symlinked
 *      directories or leaves).
 *   2. `openInSandbox` opens the checked real path with O_NOFOLLOW and verifies that the file it
 *      actually opened is the checked one, so a link swapped in between check and use is refused.
 */
export class SandboxError extends Error {}

const PROC_FD = '/proc/self/fd';
const hasProcFd = existsSync(PROC_FD);

export function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** The real absolute path `requested` names inside the workdir (the leaf may not exist yet). */
export async function resolveInSandbox(workdir: string, requested: string): Promise<string> {
  if (requested === '') throw new SandboxError('"path" is required');
  if (requested.includes('\0'))
    throw new SandboxError(`path ${JSON.stringify(requested)} contains a NUL byte`);
  // Go axe's rule: file tools take paths relative to the workdir, never absolute ones.
  if (isAbsolute(requested)) {
    throw new SandboxError(
      `path "${requested}": absolute paths are not allowed (use a path relative to the workdir)`,
    );
  }
  const root = await realpath(workdir);
  const lexical = resolve(root, requested);
  if (!isWithin(lexical, root)) throw new SandboxError(`path "${requested}" escapes the workdir (${root})`);
  const { existing, rest } = await longestExistingPrefix(lexical, root);
  let real: string;
  try {
    real = await realpath(existing);
  } catch {
    throw new SandboxError(`path "${requested}" goes through a symlink whose target does not exist`);
  }
  if (!isWithin(real, root)) {
    throw new SandboxError(`path "${requested}" leaves the workdir through a symlink (to ${real})`);
  }
  return rest === '' ? real : join(real, rest);
}

async function longestExistingPrefix(
  path: string,
  root: string,
): Promise<{ existing: string; rest: string }> {
  let current = path;
  while (current !== root) {
    try {
      await lstat(current);
      return { existing: current, rest: relative(current, path) };
    } catch {
      current = dirname(current);
    }
  }
  return { existing: root, rest: relative(root, path) };
}

/** Opens a checked path without following a symlink and verifies the opened file is that path. */
export async function openInSandbox(
  workdir: string,
  checked: string,
  flags: number,
  shown: string,
): Promise<FileHandle> {
  const root = await realpath(workdir);
  let handle: FileHandle;
  let created = false;
  // O_NONBLOCK: opening a FIFO planted in the workdir must not hang the tool (it is refused below).
  flags |= constants.O_NONBLOCK;
  try {
    if (flags & constants.O_CREAT) {
      try {
        handle = await createExclusive(checked, flags, root, shown);
        created = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        handle = await open(checked, (flags & ~constants.O_CREAT) | constants.O_NOFOLLOW);
      }
    } else {
      handle = await open(checked, flags | constants.O_NOFOLLOW);
    }
  } catch (error) {
    throw error instanceof SandboxError ? error : describeOpenError(error, shown);
  }
  const opened = await openedPath(handle, checked);
  if (opened !== checked || !isWithin(opened, root)) {
    await handle.close();
    if (created && opened !== undefined) await unlink(opened).catch(() => {});
    throw new SandboxError(
      `path "${shown}" changed between check and use (now ${opened ?? 'unknown'}): refused`,
    );
  }
  const info = await handle.stat();
  if (!info.isFile() && !info.isDirectory()) {
    await handle.close();
    throw new SandboxError(`path "${shown}" is not a regular file`);
  }
  return handle;
}

/**
 * Creates a new file (O_EXCL, O_NOFOLLOW). On Linux the parent directory is opened first, checked
 * to be the expected one, and the file is created through that open directory
 * (`/proc/self/fd/<dir>/<name>`, like openat): a parent swapped for a symlink can then not make
 * the file appear outside, not even for a moment.
 */
async function createExclusive(checked: string, flags: number, root: string, shown: string) {
  const exclusive = flags | constants.O_EXCL | constants.O_NOFOLLOW;
  if (!hasProcFd) return open(checked, exclusive, 0o644);
  const parent = dirname(checked);
  const dir = await open(parent, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ELOOP' && error.code !== 'ENOTDIR') throw error;
      throw new SandboxError(
        `path "${shown}" changed between check and use (its directory is now a symlink): refused`,
      );
    },
  );
  try {
    const pinned = join(PROC_FD, String(dir.fd));
    const real = await readlink(pinned);
    if (real !== parent || !isWithin(real, root)) {
      throw new SandboxError(`path "${shown}" changed between check and use (now ${real}): refused`);
    }
    return await open(join(pinned, basename(checked)), exclusive, 0o644);
  } finally {
    await dir.close();
  }
}

/** The real path of an open file: the kernel's own answer on Linux, an inode comparison elsewhere. */
async function openedPath(handle: FileHandle, checked: string): Promise<string | undefined> {
  if (hasProcFd) {
    try {
      return await readlink(join(PROC_FD, String(handle.fd)));
    } catch {
      return undefined;
    }
  }
  try {
    const [fromFd, fromPath] = await Promise.all([handle.stat(), stat(await realpath(checked))]);
    return fromFd.dev === fromPath.dev && fromFd.ino === fromPath.ino ? await realpath(checked) : undefined;
  } catch {
    return undefined;
  }
}

/** A path to read a directory through that cannot be redirected after the check. */
export function directoryReadPath(handle: FileHandle, checked: string): string {
  return hasProcFd ? join(PROC_FD, String(handle.fd)) : checked;
}

function describeOpenError(error: unknown, shown: string): Error {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return new SandboxError(`path "${shown}" does not exist`);
    case 'ELOOP':
      return new SandboxError(`path "${shown}" is a symlink (changed between check and use?): refused`);
    case 'EISDIR':
      return new SandboxError(`path "${shown}" is a directory, not a file`);
    case 'ENOTDIR':
      return new SandboxError(`path "${shown}" is not a directory`);
    case 'ENXIO':
      return new SandboxError(`path "${shown}" is not a regular file`);
    case 'EACCES':
      return new SandboxError(`path "${shown}": permission denied`);
    default:
      return new SandboxError(`path "${shown}": ${code ?? String(error)}`);
  }
}
