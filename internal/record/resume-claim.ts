import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { isPlainObject } from '../plain-object.js';
import { ownIdentity, type ProcessIdentity, processLiveness } from '../process-alive.js';
import { isRunId } from './run-id.js';

/**
 * `<run dir>/resumed-by.json`: the process that resumes the run and, once its own record exists,
 * that new run's id. Made exclusively, so that one `--resume` at most picks up an interruption:
 * a second one, at the same time or later, is refused and pointed to the newer run (which can be
 * resumed in turn). Written durably (fsync): after a crash of the machine it still says so.
 */
const CLAIM_FILE = 'resumed-by.json';
const CLAIM_MAX = 64 * 1024;

export interface ResumeClaimContent {
  pid: number;
  process?: ProcessIdentity;
  /** The run that resumes it, once recorded. */
  run?: string;
}

export interface ResumeClaim {
  /** Records the new run's id in the claim (durably); a failure is thrown. */
  name(run: string): Promise<void>;
}

/**
 * Claims run `id` (in `dir`) for this process's `--resume`; a ConfigError (exit 2) when another
 * `--resume` holds it or did. A claim whose process is gone before it named its run (it stopped
 * before its run started, or the run was not recorded) is stale: it is replaced.
 */
export async function claimResume(dir: string, id: string): Promise<ResumeClaim> {
  const file = join(dir, id, CLAIM_FILE);
  const identity = ownIdentity();
  const mine: ResumeClaimContent = { pid: process.pid, ...(identity ? { process: identity } : {}) };
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFileAtomic(file, claimText(mine), { exclusive: true, mode: 0o600 });
      return {
        name: (run) =>
          writeFileAtomic(file, claimText({ ...mine, run }), { mode: 0o600 }).catch((error: unknown) => {
            throw new ConfigError(`--resume: cannot write ${file} (${fsErrorReason(error)})`);
          }),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new ConfigError(`--resume: cannot write ${file} (${fsErrorReason(error)})`);
      }
    }
    const held = await readClaim(file);
    if (held === 'missing' && attempt < 2) continue;
    const alive = typeof held === 'object' && processLiveness(held.pid, held.process) !== 'gone';
    if (typeof held === 'object' && (alive || held.run !== undefined)) {
      throw new ConfigError(refusal(id, held, alive));
    }
    if (typeof held !== 'object' || attempt >= 2) {
      throw new ConfigError(
        `--resume: run ${id} is claimed by another --resume (${file} cannot be read; remove it if no axe resumes the run)`,
      );
    }
    // Stale: its process stopped before its run was recorded.
    await fsPromises()
      .unlink(file)
      .catch(() => {});
  }
}

/** The run that resumed run `id` (in `dir`), as its claim names it; undefined when none did. */
export async function resumedBy(dir: string, id: string): Promise<string | undefined> {
  const claim = await readClaim(join(dir, id, CLAIM_FILE));
  return typeof claim === 'object' ? claim.run : undefined;
}

function refusal(id: string, held: ResumeClaimContent, alive: boolean): string {
  const run = held.run === undefined ? '' : ` (run ${held.run})`;
  if (alive) return `run ${id} is being resumed by process ${held.pid}${run}`;
  return `run ${id} was resumed by run ${held.run}; resume that run instead (axe run --resume ${held.run})`;
}

function claimText(claim: ResumeClaimContent): string {
  return `${JSON.stringify(claim)}\n`;
}

/** The claim; `missing` when there is none, `unreadable` when it is not one. */
async function readClaim(file: string): Promise<ResumeClaimContent | 'missing' | 'unreadable'> {
  let value: unknown;
  try {
    value = JSON.parse((await readRegularFile(file, CLAIM_MAX)).toString('utf8'));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  if (!isPlainObject(value) || !Number.isSafeInteger(value.pid) || (value.pid as number) <= 0) {
    return 'unreadable';
  }
  const claim: ResumeClaimContent = { pid: value.pid as number };
  if (isPlainObject(value.process)) claim.process = value.process as ProcessIdentity;
  if (typeof value.run === 'string' && isRunId(value.run)) claim.run = value.run;
  return claim;
}
