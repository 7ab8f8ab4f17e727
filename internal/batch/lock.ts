import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { isPlainObject } from '../plain-object.js';
import { ownIdentity, type ProcessIdentity, processLiveness } from '../process-alive.js';
import { FILE_MODE } from './store.js';

/** Locks a batch may gather (each a process that ran it and ended). */
const LOCKS_MAX = 1000;

/**
 * One process per batch: `lock.<n>.json` names the process that runs it. A lock is made
 * exclusively, and never removed (two processes that both found a lock stale would each remove
 * the other's fresh one): the next one is made after it. So the exclusive create is the only
 * arbiter, and the last lock is the holder's.
 */
export async function lockBatch(batchDir: string, id: string): Promise<void> {
  const identity = ownIdentity();
  const mine = `${JSON.stringify({ pid: process.pid, ...(identity ? { process: identity } : {}) })}\n`;
  for (let n = 0; n < LOCKS_MAX; n++) {
    const file = join(batchDir, `lock.${n}.json`);
    try {
      await writeFileAtomic(file, mine, { exclusive: true, mode: FILE_MODE });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new ConfigError(`batch ${id}: cannot write ${file} (${fsErrorReason(error)})`);
      }
    }
    const holder = await readLock(file);
    if (holder !== undefined && processLiveness(holder.pid, holder.process) !== 'gone') {
      throw new ConfigError(`batch ${id} is being run by process ${holder.pid}`);
    }
  }
  throw new ConfigError(
    `batch ${id} has ${LOCKS_MAX} locks in ${batchDir}: remove the lock.*.json files if no axe runs it`,
  );
}

/** The process a lock names; undefined when the file is not a lock (a crash cut it: no holder). */
async function readLock(file: string): Promise<{ pid: number; process?: ProcessIdentity } | undefined> {
  try {
    const value: unknown = JSON.parse((await readRegularFile(file, 64 * 1024)).toString('utf8'));
    if (!isPlainObject(value) || !Number.isSafeInteger(value.pid)) return undefined;
    return {
      pid: value.pid as number,
      ...(isPlainObject(value.process) ? { process: value.process as ProcessIdentity } : {}),
    };
  } catch {
    return undefined;
  }
}
