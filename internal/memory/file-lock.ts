import { constants } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { sleep } from '../abort.js';
import { fsPromises } from '../fs/promises.js';
import { describeFileType } from '../fs/read-bounded.js';
import { processAlive } from '../process-alive.js';

/** How long a writer waits for another one before giving up with a clear error. */
const LOCK_WAIT_MS = 10_000;

/**
 * A lock is held for one append or one trim (a read, a write, an fsync): one this much older is
 * stale even when a process with its pid is alive, since pids are reused (a container restarts
 * axe with the same small pid).
 */
const LOCK_STALE_MS = 60_000;

const NEVER = new AbortController().signal;

/** The tokens of the locks this process holds: a lock with our pid and another token is stale. */
const held = new Set<string>();

/**
 * Runs `work` while holding `<file>.lock`, a lock file created exclusively (O_EXCL), so that
 * writers in different processes — two runs appending, a `gc` trimming — take turns. The lock
 * holds `<pid> <token>`: a lock left by a process that no longer exists (killed mid-write) is
 * broken, never waited on forever. The wait ends, rejecting with its reason, when `signal` aborts
 * (Ctrl-C, the run's deadline).
 */
export async function withFileLock<T>(
  file: string,
  work: () => Promise<T>,
  signal: AbortSignal = NEVER,
): Promise<T> {
  const lock = `${file}.lock`;
  const token = await acquire(lock, file, signal);
  try {
    return await work();
  } finally {
    await fsPromises()
      .unlink(lock)
      .catch(() => {});
    held.delete(token);
  }
}

/** Takes the lock, breaking a stale one; its token. */
async function acquire(lock: string, file: string, signal: AbortSignal): Promise<string> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    const token = await tryCreate(lock);
    if (token !== undefined) return token;
    if (await breakIfStale(lock)) continue;
    if (Date.now() > deadline) {
      throw new Error(
        `${file} stays locked by another process (${lock}); remove the lock if no axe is running`,
      );
    }
    await sleep(wait + Math.random() * wait, signal);
  }
}

/** Creates the lock with our pid and a fresh token (returned); undefined when it exists. */
async function tryCreate(lock: string): Promise<string | undefined> {
  const { open, unlink } = fsPromises();
  let handle: FileHandle;
  try {
    handle = await open(lock, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  const token = Math.floor(Math.random() * 2 ** 48).toString(16);
  // Held before its content can be read, so that our own waiters never break it.
  held.add(token);
  try {
    try {
      await handle.writeFile(`${process.pid} ${token}\n`);
    } finally {
      await handle.close();
    }
    return token;
  } catch (error) {
    // An empty lock left behind (full disk) would hold every writer off for LOCK_WAIT_MS.
    held.delete(token);
    await unlink(lock).catch(() => {});
    throw error;
  }
}

interface LockState {
  ino: bigint;
  mtimeNs: bigint;
  content: string;
}

/** A lock that is no file axe made (a FIFO, a directory): never waited on, never removed. */
class ForeignLockError extends Error {}

/**
 * One lock file's identity and content, read through one handle so that they agree. Opened
 * non-blocking: a FIFO planted in its place would block the open until a writer came.
 */
async function inspect(lock: string): Promise<LockState> {
  const handle = await fsPromises().open(lock, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat({ bigint: true });
    if (!stats.isFile()) {
      throw new ForeignLockError(
        `${lock} is ${describeFileType(stats)}, not a lock file axe made; remove it if no axe is running`,
      );
    }
    const { ino, mtimeNs } = stats;
    return { ino, mtimeNs, content: await handle.readFile('utf8') };
  } finally {
    await handle.close();
  }
}

/** Removes a lock whose owner is gone; true when it did (or the lock changed or vanished meanwhile). */
async function breakIfStale(lock: string): Promise<boolean> {
  try {
    const seen = await inspect(lock);
    if (!orphaned(seen.content, Date.now() - Number(seen.mtimeNs / 1_000_000n))) return false;
    // Only the lock we judged: a new owner may have taken it since, even with the same inode
    // number (ext4 reuses a freed one at once), but never with the same mtime and token.
    const now = await inspect(lock);
    if (now.ino !== seen.ino || now.mtimeNs !== seen.mtimeNs || now.content !== seen.content) return true;
    await fsPromises().unlink(lock);
    return true;
  } catch (error) {
    if (error instanceof ForeignLockError) throw error;
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * A lock's owner is gone: its pid is dead, or is ours on a lock we do not hold, or the lock is far
 * older than any append or trim. One without a pid (its owner died before writing it) goes after
 * LOCK_WAIT_MS.
 */
function orphaned(content: string, ageMs: number): boolean {
  const [pidText = '', token = ''] = content.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return ageMs > LOCK_WAIT_MS;
  if (pid === process.pid) return !held.has(token);
  return ageMs > LOCK_STALE_MS || !processAlive(pid);
}
