import { fsPromises } from '../fs/promises.js';
import { processAlive } from '../process-alive.js';

/** How long a writer waits for another one before giving up with a clear error. */
const LOCK_WAIT_MS = 10_000;

/**
 * Runs `work` while holding `<file>.lock`, a lock file created exclusively (O_EXCL), so that
 * writers in different processes — two runs appending, a `gc` trimming — take turns. The lock
 * holds the owner's pid: a lock left by a process that no longer exists (killed mid-write) is
 * broken, never waited on forever.
 */
export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const { open, unlink } = fsPromises();
  const lock = `${file}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
    try {
      const handle = await open(lock, 'wx', 0o644);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (await breakIfStale(lock)) continue;
      if (Date.now() > deadline) {
        throw new Error(
          `${file} stays locked by another process (${lock}); remove the lock if no axe is running`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, wait + Math.random() * wait));
    }
  }
  try {
    return await work();
  } finally {
    await unlink(lock).catch(() => {});
  }
}

/** Removes a lock whose owner is gone; true when it did (or the lock vanished meanwhile). */
async function breakIfStale(lock: string): Promise<boolean> {
  const { readFile, stat, unlink } = fsPromises();
  try {
    const before = await stat(lock);
    const pid = Number((await readFile(lock, 'utf8')).trim());
    const orphaned =
      Number.isInteger(pid) && pid > 0 ? !processAlive(pid) : Date.now() - before.mtimeMs > LOCK_WAIT_MS;
    if (!orphaned) return false;
    // Only the lock we looked at: a new owner may have taken it since.
    if ((await stat(lock)).ino !== before.ino) return true;
    await unlink(lock);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
