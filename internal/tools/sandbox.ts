import { constants, existsSync, type Stats } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fsPromises } from '../fs/promises.js';
import { type AtomicWriteOptions, FileChangedError, writeFileAtomic } from '../fs/write-atomic.js';

/**
 * The workdir sandbox of the file tools. A path is checked in two steps:
 *   1. `resolveInSandbox` resolves it against the workdir's real path, following every existing
 *      symlink, and refuses absolute paths and anything that ends up outside (`..`, symlinked
 *      directories or leaves).
 *   2. `openInSandbox` opens the checked real path with O_NOFOLLOW and verifies that the file it
 *      actually opened is the checked one, so a link swapped in between check and use is refused;
 *      `writeInSandbox` writes through the checked, pinned parent directory.
 */
export class SandboxError extends Error {}

const PROC_FD = '/proc/self/fd';
const hasProcFd = existsSync(PROC_FD);

export function isWithin(child: string, parent: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/** The real absolute path `requested` names inside the workdir (the leaf may not exist yet). */
export async function resolveInSandbox(workdir: string, requested: string): Promise<string> {
  const resolved = await resolveParts(workdir, requested);
  if (resolved.rest === '' && namesDirectory(requested)) await refuseNonDirectory(resolved, requested);
  return resolved.checked;
}

/**
 * `resolveInSandbox` for a file about to be written, its missing directories created: refused
 * when the path names a directory (the workdir itself, a trailing "/") or goes through a file.
 */
export async function resolveToWrite(workdir: string, requested: string): Promise<string> {
  const resolved = await resolveParts(workdir, requested);
  const { root, rest, checked } = resolved;
  if (checked === root) throw new SandboxError(`path "${requested}" is the workdir itself, not a file`);
  // Its missing directories would be made inside `existing`: mkdir would fail on a file there.
  if (rest !== '') await refuseNonDirectory(resolved, requested);
  if (!namesDirectory(requested)) return checked;
  if (rest === '') {
    await refuseNonDirectory(resolved, requested);
    throw new SandboxError(`path "${requested}" is a directory, not a file`);
  }
  throw new SandboxError(`path "${requested}" names a directory, not a file`);
}

/** Creates the missing directories above a path `resolveToWrite` checked. */
export async function makeParents(checked: string, shown: string): Promise<void> {
  try {
    await fsPromises().mkdir(dirname(checked), { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // A directory replaced by a file since the check.
    if (code === 'EEXIST' || code === 'ENOTDIR') {
      throw new SandboxError(`path "${shown}": a part of the path is not a directory`);
    }
    throw describeOpenError(error, shown);
  }
}

interface Resolved {
  /** The workdir's real path. */
  root: string;
  /** The longest existing prefix of the path, lexically, and its real path. */
  existing: string;
  real: string;
  /** The missing part after `existing` ('' when the whole path exists). */
  rest: string;
  checked: string;
}

async function resolveParts(workdir: string, requested: string): Promise<Resolved> {
  if (requested === '') throw new SandboxError('"path" is required');
  if (requested.includes('\0'))
    throw new SandboxError(`path ${JSON.stringify(requested)} contains a NUL byte`);
  // Go axe's rule: file tools take paths relative to the workdir, never absolute ones.
  if (isAbsolute(requested)) {
    throw new SandboxError(
      `path "${requested}": absolute paths are not allowed (use a path relative to the workdir)`,
    );
  }
  const root = await fsPromises().realpath(workdir);
  const lexical = resolve(root, requested);
  if (!isWithin(lexical, root)) throw new SandboxError(`path "${requested}" escapes the workdir (${root})`);
  const { existing, rest } = await longestExistingPrefix(lexical, root);
  let real: string;
  try {
    real = await fsPromises().realpath(existing);
  } catch {
    throw new SandboxError(`path "${requested}" goes through a symlink whose target does not exist`);
  }
  if (!isWithin(real, root)) {
    throw new SandboxError(`path "${requested}" leaves the workdir through a symlink (to ${real})`);
  }
  return { root, existing, real, rest, checked: rest === '' ? real : join(real, rest) };
}

/**
 * Whether a path can only name a directory: it ends in "/" or its last part is "." or "..".
 * `resolve` drops that ending, but the file system honours it (`f/` is ENOTDIR for a file `f`).
 */
function namesDirectory(requested: string): boolean {
  const last = requested.split(sep === '/' ? '/' : /[\\/]/).pop();
  return last === '' || last === '.' || last === '..';
}

/**
 * Refuses a path whose existing part is used as a directory (a trailing "/", missing parts after
 * it) but is not one, naming that part relative to the workdir.
 */
async function refuseNonDirectory({ root, existing, real }: Resolved, requested: string): Promise<void> {
  // Gone since it was resolved: opening or writing it says what is wrong.
  const info = await fsPromises()
    .stat(real)
    .catch(() => undefined);
  if (info === undefined || info.isDirectory()) return;
  const what = info.isFile() ? 'is a file, not a directory' : 'is not a directory';
  throw new SandboxError(`path "${requested}": "${relative(root, existing)}" ${what}`);
}

async function longestExistingPrefix(
  path: string,
  root: string,
): Promise<{ existing: string; rest: string }> {
  let current = path;
  while (current !== root) {
    try {
      await fsPromises().lstat(current);
      return { existing: current, rest: relative(current, path) };
    } catch {
      current = dirname(current);
    }
  }
  return { existing: root, rest: relative(root, path) };
}

/** Opens a checked existing path without following a symlink and verifies the opened file is that path. */
export async function openInSandbox(
  workdir: string,
  checked: string,
  flags: number,
  shown: string,
): Promise<FileHandle> {
  const root = await fsPromises().realpath(workdir);
  let handle: FileHandle;
  try {
    // O_NONBLOCK: opening a FIFO planted in the workdir must not hang the tool (it is refused below).
    handle = await fsPromises().open(checked, flags | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    throw describeOpenError(error, shown);
  }
  const opened = await openedPath(handle, checked);
  if (opened !== checked || !isWithin(opened, root)) {
    await handle.close();
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
 * Replaces (or creates) the file at a checked path with `data`, whole or not at all: a temp file
 * in the same directory, fsync, rename over the target, the target's mode kept. On Linux the
 * parent directory is opened first, checked to be the expected one, and both the temp file and
 * the rename go through that open directory (`/proc/self/fd/<dir>/<name>`, like openat): a
 * parent swapped for a symlink cannot make the file land outside, not even for a moment. A full
 * disk or a short write throws and leaves the old file untouched.
 */
export async function writeInSandbox(
  workdir: string,
  checked: string,
  data: Uint8Array,
  shown: string,
  options: Pick<AtomicWriteOptions, 'unchangedSince'> = {},
): Promise<void> {
  const root = await fsPromises().realpath(workdir);
  const parent = dirname(checked);
  const dir = hasProcFd ? await pinDirectory(parent, root, shown) : undefined;
  try {
    const target = dir === undefined ? checked : join(PROC_FD, String(dir.fd), basename(checked));
    await refuseNonRegularTarget(target, shown);
    await writeFileAtomic(target, data, options);
  } catch (error) {
    throw error instanceof SandboxError ? error : describeWriteError(error, shown);
  } finally {
    await dir?.close();
  }
}

async function pinDirectory(parent: string, root: string, shown: string): Promise<FileHandle> {
  const dir = await fsPromises()
    .open(parent, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW)
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ELOOP' && error.code !== 'ENOTDIR') throw describeOpenError(error, shown);
      throw new SandboxError(
        `path "${shown}" changed between check and use (its directory is now a symlink): refused`,
      );
    });
  const real = await fsPromises()
    .readlink(join(PROC_FD, String(dir.fd)))
    .catch(() => undefined);
  if (real !== parent || !isWithin(real, root)) {
    await dir.close();
    throw new SandboxError(`path "${shown}" changed between check and use (now ${real}): refused`);
  }
  return dir;
}

/** The target may be missing or a regular file; a symlink, directory, FIFO or device is refused. */
async function refuseNonRegularTarget(target: string, shown: string): Promise<void> {
  let info: Stats;
  try {
    info = await fsPromises().lstat(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (info.isSymbolicLink()) {
    throw new SandboxError(`path "${shown}" is a symlink (changed between check and use?): refused`);
  }
  if (info.isDirectory()) throw new SandboxError(`path "${shown}" is a directory, not a file`);
  if (!info.isFile()) throw new SandboxError(`path "${shown}" is not a regular file`);
}

function describeWriteError(error: unknown, shown: string): Error {
  if (error instanceof FileChangedError) {
    return new SandboxError(`"${shown}" changed since it was read: not edited (read it again)`);
  }
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    const why = code === 'ENOSPC' ? 'no space left on the device' : 'disk quota exceeded';
    return new SandboxError(`could not write "${shown}": ${why}; the file was not changed`);
  }
  const described = describeOpenError(error, shown);
  return new SandboxError(`${described.message}; the file was not changed`);
}

/** The real path of an open file: the kernel's own answer on Linux, an inode comparison elsewhere. */
async function openedPath(handle: FileHandle, checked: string): Promise<string | undefined> {
  if (hasProcFd) {
    try {
      return await fsPromises().readlink(join(PROC_FD, String(handle.fd)));
    } catch {
      return undefined;
    }
  }
  try {
    const [fromFd, fromPath] = await Promise.all([
      handle.stat(),
      fsPromises().stat(await fsPromises().realpath(checked)),
    ]);
    return fromFd.dev === fromPath.dev && fromFd.ino === fromPath.ino
      ? await fsPromises().realpath(checked)
      : undefined;
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
