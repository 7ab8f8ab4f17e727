import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { isAgentPath } from '../agent/agent-files.js';
import type { GlobalConfig } from '../config/global.js';
import { ConfigError, ExitCode, errorMessage } from '../errors.js';
import type { RunOutcome, RunRequest } from '../runner/index.js';
import { fileDigest } from './digest.js';
import { completedChildren, earlierCalls, recordedConversation, resumedConversation } from './pick-up.js';
import type { RecordedRequest, RunRecord } from './record.js';
import { RunRecorder } from './recorder.js';
import { claimResume, type ResumeClaim } from './resume-claim.js';
import { findRun, loadRun, pruneRuns, runLiveness, runsDir } from './store.js';

const DEFAULT_RUNS_KEPT = 100;

/** Every run leaves a record unless `--no-record-run` or `AXE_NO_RUN_RECORD=1` says not to. */
export function recordsRun(options: Record<string, unknown>, env: NodeJS.ProcessEnv): boolean {
  return options.recordRun !== false && env.AXE_NO_RUN_RECORD !== '1';
}

export interface OpenRecord {
  recorder: RunRecorder;
  runsDir: string;
  /** `[runs] keep`, once config.toml is read. */
  keep: Promise<number>;
}

/**
 * The run's record, started in the background (nothing waits for its directory, its agent file's
 * fingerprint or config.toml's `[runs] keep`; with `keep = 0` nothing is written). A record that
 * cannot be made is said once.
 */
export function openRunRecord(
  globalConfig: () => Promise<GlobalConfig>,
  env: NodeJS.ProcessEnv,
  request: Omit<RecordedRequest, 'agentDigest'>,
  links: Pick<RunRecord, 'resumedFrom' | 'continuedFrom' | 'batch'>,
  warn: (message: string) => void,
): OpenRecord {
  const dir = runsDir(env);
  const keep = runsToKeep(globalConfig);
  const recorder = RunRecorder.start(
    dir,
    async () =>
      (await keep) === 0
        ? undefined
        : { request: { ...request, agentDigest: fileDigest(request.agentFile) }, links },
    warn,
  );
  return { recorder, runsDir: dir, keep };
}

/** `[runs] keep` of config.toml; a config.toml that does not load fails the run elsewhere, not here. */
export async function runsToKeep(globalConfig: () => Promise<GlobalConfig>): Promise<number> {
  try {
    return (await globalConfig()).runsKeep ?? DEFAULT_RUNS_KEPT;
  } catch {
    return DEFAULT_RUNS_KEPT;
  }
}

/**
 * A resumed run's claim on the run it resumes names it, before the run does anything: from then on
 * the older run points to this one. Not recorded (`--no-record-run`, `keep = 0`): the claim holds
 * while this process runs.
 */
export async function nameResume(claim: ResumeClaim, record: OpenRecord | undefined): Promise<void> {
  const id = await record?.recorder.created();
  if (id) await claim.name(id);
}

/** The record's last lines and `run.json`, then the oldest records beyond `keep` go. */
export async function closeRunRecord(
  record: OpenRecord,
  outcome: RunOutcome,
  warn: (message: string) => void,
): Promise<void> {
  const recorded = await record.recorder.finish(outcome, outcome.error?.exitCode ?? ExitCode.ok);
  if (!recorded) return;
  exitCodeGoesTo(record.recorder);
  const keep = await record.keep;
  try {
    await pruneRuns(record.runsDir, keep);
  } catch (error) {
    warn(`run records: cannot remove old runs in ${record.runsDir} (${errorMessage(error)})`);
  }
}

/** The record whose run.json takes the process's exit code, and whether the exit hook is set. */
let exitRecord: RunRecorder | undefined;
let exitHooked = false;

/**
 * The process's exit code is written into this record's run.json when it differs from the one
 * recorded. One hook for the whole process, whichever record closed last: a long-lived process
 * closing many records does not pile up listeners, nor keep its closed records alive.
 */
function exitCodeGoesTo(recorder: RunRecorder): void {
  exitRecord = recorder;
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', (code) => exitRecord?.exitedWith(code));
}

/** A recorded run this run follows: its id, what it was asked, and where the new run starts. */
export interface PickedUp {
  id: string;
  request: RecordedRequest;
  /** Absent when the run stopped before its first request: it starts afresh. */
  prior?: RunRequest['prior'];
  reuse?: RunRequest['reuse'];
  /** `--resume`: this process's hold on the run it resumes (see `claimResume`). */
  claim?: ResumeClaim;
}

/** The recorded run `ref` names (an id, a unique prefix, `last`). */
async function recordedRun(ref: string, env: NodeJS.ProcessEnv) {
  const dir = runsDir(env);
  return { dir, ...(await loadRun(dir, await findRun(dir, ref))) };
}

/**
 * `--continue [run]`: the conversation of the top-level agent of a run of `agent` (default: the
 * newest), which this run's message follows.
 */
export async function continuePlan(ref: string, agent: string, env: NodeJS.ProcessEnv): Promise<PickedUp> {
  const run = await recordedRun(ref, env);
  const { request } = run.record;
  if (!sameAgent(agent, request)) {
    throw new ConfigError(
      `--continue: run ${run.record.id} is a run of ${agentNamed(request)}, not "${agent}" (axe run ${agentArg(request)} --continue ${run.record.id})`,
    );
  }
  const messages = recordedConversation(run);
  return {
    id: run.record.id,
    request,
    prior: { kind: 'follow', messages, earlier: earlierCalls(run, messages) },
  };
}

/**
 * The agent named on the command line is the recorded run's: the same name as typed, or — for a
 * name that is a path (`proj/bot.md`, `/abs/bot.md`, as `locateAgent` takes it) — the same file,
 * however it is spelled from wherever the shell is.
 */
function sameAgent(agent: string, request: RecordedRequest): boolean {
  if (agent === request.agent) return true;
  if (!isAgentPath(agent)) return false;
  return canonical(resolve(process.cwd(), agent)) === canonical(request.agentFile);
}

/** The file behind a path (symlinks followed), or the path when it cannot be read. */
function canonical(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** The recorded agent in a message: its name, and its file when the name was a path. */
function agentNamed(request: RecordedRequest): string {
  return isAgentPath(request.agent) && request.agent !== request.agentFile
    ? `"${request.agent}" (${request.agentFile})`
    : `"${request.agent}"`;
}

/** How to name the recorded agent from any directory: its file when its name was a path. */
function agentArg(request: RecordedRequest): string {
  return isAgentPath(request.agent) ? request.agentFile : request.agent;
}

/**
 * `--resume <run>`: a run that did not complete, picked up where its top-level agent stopped —
 * calls left unanswered, or answered only as Ctrl-C or the deadline stopped them, run again, except
 * the sub-agents that had completed. Refused when the agent file changed since (unless `force`),
 * when the run completed, or when another `--resume` holds it or did (`claimResume`: a run is
 * resumed once; then the newer run is the one to resume).
 */
export async function resumePlan(
  ref: string,
  agent: string | undefined,
  force: boolean,
  env: NodeJS.ProcessEnv,
): Promise<PickedUp> {
  const run = await recordedRun(ref, env);
  const { record } = run;
  const { request } = record;
  if (agent !== undefined && !sameAgent(agent, request)) {
    throw new ConfigError(`--resume: run ${record.id} is a run of ${agentNamed(request)}, not "${agent}"`);
  }
  // `--force` does not resume a run whose very process still runs it (its pid, start time and
  // boot match): that would run the same agent twice at once, on the same files. It does resume
  // one whose pid alone is in use (a record without its process's identity, or no /proc here),
  // which only the user can tell from another process that took the pid.
  const liveness = runLiveness(record);
  if (liveness === 'alive') {
    throw new ConfigError(`--resume: run ${record.id} is still running (pid ${record.pid})`);
  }
  if (liveness === 'unverified' && !force) {
    throw new ConfigError(
      `--resume: run ${record.id} may still be running: its pid ${record.pid} is in use, and nothing tells whether by that run (--force resumes it anyway)`,
    );
  }
  if (record.status === 'completed') {
    throw new ConfigError(
      `--resume: run ${record.id} completed; nothing to resume (axe run ${request.agent} --continue ${record.id} -p … sends it a new message)`,
    );
  }
  let digest: string;
  try {
    digest = fileDigest(request.agentFile);
  } catch (error) {
    throw new ConfigError(`--resume: cannot read ${request.agentFile} (${errorMessage(error)})`);
  }
  if (digest !== request.agentDigest && !force) {
    throw new ConfigError(
      `--resume: ${request.agentFile} changed since run ${record.id}; resuming would run another agent (--force resumes anyway)`,
    );
  }
  const messages = resumedConversation(run);
  const last = messages.at(-1);
  if (last?.role === 'assistant' && (last.toolCalls ?? []).length === 0) {
    throw new ConfigError(
      `--resume: the agent of run ${record.id} had given its answer (the run ended ${record.status}); nothing to resume`,
    );
  }
  // Last, so that a refused --resume holds nothing: from here on no other --resume picks it up.
  const claim = await claimResume(run.dir, record.id);
  return {
    id: record.id,
    request,
    claim,
    ...(messages.length > 0
      ? { prior: { kind: 'pick-up' as const, messages, earlier: earlierCalls(run, messages) } }
      : {}),
    reuse: completedChildren(run, messages),
  };
}
