import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
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
 *
 * A claim whose process stopped before it named its run is stale; it is never removed (two
 * `--resume` that both found it stale would each remove the other's fresh claim and both run):
 * the next claim is made, exclusively too, as `resumed-by.1.json`, then `.2`, and so on. The
 * exclusive create is the only arbiter, and the last claim of the chain is the one that counts.
 */
const CLAIM_FILE = 'resumed-by.json';
const CLAIM_MAX = 64 * 1024;
/** Stale claims a run may gather (each a `--resume` that died before its run started). */
const CLAIMS_MAX = 100;

/** The `n`th claim on a run: `resumed-by.json`, then `resumed-by.<n>.json`. */
function claimFile(dir: string, id: string, n: number): string {
  return join(dir, id, n === 0 ? CLAIM_FILE : CLAIM_FILE.replace(/\.json$/, `.${n}.json`));
}

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
 * before its run started, or the run was not recorded) is stale: the next one is made after it.
 */
export async function claimResume(dir: string, id: string): Promise<ResumeClaim> {
  const identity = ownIdentity();
  const mine: ResumeClaimContent = { pid: process.pid, ...(identity ? { process: identity } : {}) };
  let missed = 0;
  for (let n = 0; n < CLAIMS_MAX; n++) {
    const file = claimFile(dir, id, n);
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
    if (held === 'missing' && missed++ < 2) {
      // Removed by hand since: this place is free again.
      n--;
      continue;
    }
    if (typeof held !== 'object') {
      throw new ConfigError(
        `--resume: run ${id} is claimed by another --resume (${file} cannot be read; remove it if no axe resumes the run)`,
      );
    }
    const alive = processLiveness(held.pid, held.process) !== 'gone';
    if (alive || held.run !== undefined) throw new ConfigError(refusal(id, held, alive));
    // Stale: its process stopped before its run was recorded. The next claim goes after it.
  }
  throw new ConfigError(
    `--resume: run ${id} has ${CLAIMS_MAX} abandoned claims (${join(dir, id)}/resumed-by.*.json); remove them if no axe resumes the run`,
  );
}

/** The run that resumed run `id` (in `dir`), as its last claim names it; undefined when none did. */
export async function resumedBy(dir: string, id: string): Promise<string | undefined> {
  let run: string | undefined;
  for (let n = 0; n < CLAIMS_MAX; n++) {
    const claim = await readClaim(claimFile(dir, id, n));
    if (claim === 'missing') break;
    if (typeof claim === 'object' && claim.run !== undefined) run = claim.run;
  }
  return run;
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
