import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolvePaths } from '../config/paths.js';
import { ConfigError, errorMessage } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { readLines } from '../fs/read-lines.js';
import { isPlainObject } from '../plain-object.js';
import { type Liveness, processLiveness } from '../process-alive.js';
import {
  ENDED_FILE,
  type OutputRef,
  type RecordedAgent,
  type RecordStatus,
  RUN_JSON_MAX,
  RUN_RECORD_VERSION,
  type RunEnding,
  type RunRecord,
  type TranscriptLine,
} from './record.js';
import { resumedBy } from './resume-claim.js';
import { isRunId } from './run-id.js';
import { TreeBuilder } from './tree.js';

/** `<data dir>/runs`. */
export function runsDir(env: NodeJS.ProcessEnv): string {
  return join(resolvePaths(env).dataDir, 'runs');
}

/**
 * The ids of the recorded runs, newest first. One synchronous listing: every run lists them at
 * its end (to prune), where thread-pool round trips only hold the exit up.
 */
export async function runIds(dir: string): Promise<string[]> {
  try {
    return readdirSync(dir).filter(isRunId).sort().reverse();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** `last`, a whole id, or a prefix of exactly one id → that id; else a ConfigError (exit 2). */
export async function findRun(dir: string, ref: string): Promise<string> {
  // Every id starts with "": an empty reference would name the only run (and delete it).
  if (ref === '') throw new ConfigError('empty run id: expected a run id, a unique prefix of one, or last');
  const ids = await runIds(dir);
  if (ref === 'last') {
    const newest = ids[0];
    if (newest === undefined) throw new ConfigError(`no recorded runs in ${dir}`);
    return newest;
  }
  if (ids.includes(ref)) return ref;
  const matches = ids.filter((id) => id.startsWith(ref));
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) throw new ConfigError(`no recorded run matches "${ref}" (see axe runs list)`);
  throw new ConfigError(`"${ref}" matches ${matches.length} runs: ${matches.slice(0, 3).join(', ')}, …`);
}

/**
 * A run's `run.json`; a ConfigError naming the file when it is missing or not a record, or naming
 * the field when one that `axe runs`, `--resume` or `--continue` reads is missing or of another type.
 */
export async function readRunRecord(dir: string, id: string): Promise<RunRecord> {
  const file = join(dir, id, 'run.json');
  let record: unknown;
  try {
    record = JSON.parse((await readRegularFile(file, RUN_JSON_MAX)).toString('utf8'));
  } catch (error) {
    throw new ConfigError(`${file}: cannot read the run record (${fsErrorReason(error)})`);
  }
  if (!isPlainObject(record) || record.version !== RUN_RECORD_VERSION || record.id !== id) {
    throw new ConfigError(`${file}: cannot read the run record (not a run record of this axe)`);
  }
  const problem = RUN_RECORD(record, '');
  if (problem !== undefined) throw new ConfigError(`${file}: ${problem}`);
  const read = record as unknown as RunRecord;
  const resumer = await resumedBy(dir, id);
  if (resumer !== undefined) read.resumedBy = resumer;
  if (read.status === 'running') {
    // Its last write may have failed (a full disk): `ended.json` tells how it ended.
    const ending = await recordedEnding(join(dir, id, ENDED_FILE));
    if (ending) Object.assign(read, ending);
  }
  return read;
}

/** The most read of `ended.json` (a few hundred bytes; see `RunRecorder.finish`). */
const ENDED_MAX = 64 * 1024;

/** How the run ended, by its `ended.json`; undefined when there is none (or it is not one). */
async function recordedEnding(file: string): Promise<RunEnding | undefined> {
  let ending: unknown;
  try {
    ending = JSON.parse((await readRegularFile(file, ENDED_MAX)).toString('utf8'));
  } catch {
    return undefined;
  }
  return RUN_ENDING(ending, '') === undefined ? (ending as RunEnding) : undefined;
}

/** What is wrong with a value (`field` names it, dotted: `request.agent`), or undefined. */
type Check = (value: unknown, field: string) => string | undefined;

const is =
  (expected: string, ok: (value: unknown) => boolean): Check =>
  (value, field) =>
    ok(value) ? undefined : `"${field}" must be ${expected}`;

const optional =
  (check: Check): Check =>
  (value, field) =>
    value === undefined ? undefined : check(value, field);

/** An object whose fields each pass their check (the first that does not is named). */
const shape =
  (fields: Record<string, Check>): Check =>
  (value, field) => {
    if (!isPlainObject(value)) return `"${field}" must be an object`;
    for (const [name, check] of Object.entries(fields)) {
      const problem = check(value[name], field === '' ? name : `${field}.${name}`);
      if (problem !== undefined) return problem;
    }
    return undefined;
  };

const STRING = is('a string', (v) => typeof v === 'string');
const NUMBER = is('a number', (v) => typeof v === 'number' && Number.isFinite(v));
const WHOLE = is('a whole number', (v) => Number.isSafeInteger(v));
const POSITIVE = is('a number above 0', (v) => typeof v === 'number' && Number.isFinite(v) && v > 0);
const BOOLEAN = is('true or false', (v) => typeof v === 'boolean');
const OBJECT = is('an object', isPlainObject);
const STRINGS = is('a list of strings', (v) => Array.isArray(v) && v.every((s) => typeof s === 'string'));
/** 0 or below would be a process group to `kill(pid, 0)`: alive, whatever became of the run. */
const PID = is('a process id (a whole number above 0)', (v) => Number.isSafeInteger(v) && (v as number) > 0);

const USAGE = shape({
  total: NUMBER,
  inputTokens: NUMBER,
  outputTokens: NUMBER,
  cacheReadTokens: NUMBER,
  cacheWriteTokens: NUMBER,
});

/** `ended.json`: how the run ended. */
const RUN_ENDING = shape({
  endedAt: STRING,
  durationMs: NUMBER,
  status: STRING,
  exitCode: WHOLE,
  error: optional(STRING),
  usage: USAGE,
  cost: optional(NUMBER),
});

/**
 * The fields of a RunRecord that `axe runs list | show` (runs-view, the HTML trace), `--resume` and
 * `--continue` read, with their types. `tree` is only checked to be an object: axe never reads it
 * back (`runs show` builds the tree from the transcripts).
 */
const RUN_RECORD = shape({
  pid: PID,
  process: optional(
    shape({
      startTicks: optional(WHOLE),
      bootId: optional(STRING),
      hostname: optional(STRING),
    }),
  ),
  startedAt: STRING,
  status: STRING,
  request: shape({
    agent: STRING,
    agentFile: STRING,
    agentDigest: STRING,
    input: STRING,
    inputs: OBJECT,
    cwd: STRING,
    agentsDirs: STRINGS,
    model: optional(STRING),
    system: optional(STRING),
    skill: optional(STRING),
    workdir: optional(STRING),
    artifactDir: optional(STRING),
    timeoutSeconds: POSITIVE,
    maxTokens: optional(POSITIVE),
    stream: BOOLEAN,
    replay: optional(STRING),
  }),
  endedAt: optional(STRING),
  durationMs: optional(NUMBER),
  exitCode: optional(WHOLE),
  error: optional(STRING),
  usage: optional(USAGE),
  cost: optional(NUMBER),
  resumedFrom: optional(STRING),
  continuedFrom: optional(STRING),
  batch: optional(STRING),
  tree: optional(OBJECT),
});

/**
 * Whether a run that never said how it ended is still going: `gone` when its process is (killed,
 * or its machine crashed or rebooted, or its pid now another process's: the record names the
 * process beyond its pid, see `processLiveness`), `alive` when that very process runs, `unverified`
 * when a process has its pid and nothing tells whether it is the one (a record without the
 * process's identity, or no `/proc` here: macOS). A run that ended is `gone`.
 */
export function runLiveness(record: RunRecord): Liveness {
  return record.status === 'running' ? processLiveness(record.pid, record.process) : 'gone';
}

/** A run that never said how it ended, and whose process is gone. */
function interrupted(record: RunRecord): boolean {
  return record.status === 'running' && runLiveness(record) === 'gone';
}

/** A run another axe may still be writing (also when only its pid says so). */
export function isLive(record: RunRecord): boolean {
  return runLiveness(record) !== 'gone';
}

/** The run's status as `runs list`, `runs show --json` and the HTML trace give it. */
export function shownStatus(record: RunRecord): RecordStatus | 'interrupted' {
  return interrupted(record) ? 'interrupted' : record.status;
}

export interface LoadedRun {
  record: RunRecord;
  /** The tree as the transcripts tell it (also for a run that was killed). */
  tree: RecordedAgent | undefined;
  agents: RecordedAgent[];
  /** Each transcript's lines, by its file name relative to the run's directory. */
  transcripts: Map<string, TranscriptLine[]>;
  /** The process that ran it is gone although it never said how it ended. */
  interrupted: boolean;
}

export async function loadRun(dir: string, id: string): Promise<LoadedRun> {
  const record = await readRunRecord(dir, id);
  const builder = new TreeBuilder();
  const transcripts = new Map<string, TranscriptLine[]>();
  const outputs = new Map<string, string>();
  const agentsDir = join(dir, id, 'agents');
  const files = (
    await fsPromises()
      .readdir(agentsDir)
      .catch(() => [] as string[])
  )
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  for (const name of files) {
    const file = join('agents', name);
    const path = join(dir, id, file);
    const lines = await readTranscript(path, join(dir, id), outputs);
    transcripts.set(file, lines);
    try {
      for (const line of lines) builder.observe(line, file);
    } catch (error) {
      throw new ConfigError(`${path}: not a transcript of a run record (${errorMessage(error)})`);
    }
  }
  return {
    record,
    tree: builder.roots[0],
    agents: builder.all(),
    transcripts,
    interrupted: interrupted(record),
  };
}

/**
 * The most of one line of a transcript (an event): far above what axe writes in one (a tool's
 * large output is in its own file, see OUTPUT_INLINE_MAX), below the longest string JavaScript holds.
 */
const TRANSCRIPT_LINE_MAX = 256 * 2 ** 20;

/**
 * One transcript's lines, read line by line (a transcript may be of any size); a line cut by a
 * crash (the last one) is left out; the tool outputs stored apart are put back (`outputs`: those
 * read so far, by file, each read once). A file that cannot be read (a directory, a FIFO, a line
 * over TRANSCRIPT_LINE_MAX, no permission), a line that is JSON but no event (something else wrote
 * the file) or an output that cannot be read is a ConfigError naming it.
 */
async function readTranscript(
  file: string,
  runDir: string,
  outputs: Map<string, string>,
): Promise<TranscriptLine[]> {
  const lines: TranscriptLine[] = [];
  let notEvent = 0;
  try {
    await readLines(file, TRANSCRIPT_LINE_MAX, (raw, number) => {
      if (raw === '' || notEvent !== 0) return;
      let line: unknown;
      try {
        line = JSON.parse(raw);
      } catch {
        // Only a line cut by a crash is not JSON: it is the last one written.
        return;
      }
      if (isEvent(line)) lines.push(line);
      else notEvent = number;
    });
  } catch (error) {
    throw new ConfigError(`${file}: cannot read the transcript (${fsErrorReason(error)})`);
  }
  if (notEvent !== 0) throw new ConfigError(`${file}:${notEvent}: not an event of a run record`);
  for (const line of lines) await putOutputsBack(line, runDir, outputs);
  return lines;
}

/** A reference to a tool's output in `outputs/` (see OUTPUT_INLINE_MAX), or undefined. */
function outputRef(value: unknown): OutputRef | undefined {
  if (!isPlainObject(value)) return undefined;
  const { file, bytes } = value;
  return typeof file === 'string' && /^outputs\/\d+\.txt$/.test(file) && Number.isSafeInteger(bytes)
    ? { file, bytes: bytes as number }
    : undefined;
}

/** A line's tool outputs stored apart, read back into it. */
async function putOutputsBack(line: TranscriptLine, runDir: string, outputs: Map<string, string>) {
  const read = async (ref: OutputRef): Promise<string> => {
    let output = outputs.get(ref.file);
    if (output === undefined) {
      const path = join(runDir, ref.file);
      try {
        output = (await readRegularFile(path, ref.bytes)).toString('utf8');
      } catch (error) {
        throw new ConfigError(`${path}: cannot read the tool output (${fsErrorReason(error)})`);
      }
      outputs.set(ref.file, output);
    }
    return output;
  };
  const held = line as unknown as Record<string, unknown>;
  if (line.type === 'tool.end') {
    const ref = outputRef(held.outputRef);
    if (ref) {
      line.output = await read(ref);
      delete held.outputRef;
    }
  } else if (line.type === 'message' && line.message.role === 'tool' && Array.isArray(line.message.results)) {
    for (const result of line.message.results) {
      const ref = outputRef((result as unknown as Record<string, unknown>).contentRef);
      if (!ref) continue;
      result.content = await read(ref);
      delete (result as unknown as Record<string, unknown>).contentRef;
    }
  }
}

/** What every event has: its kind, its agent's path and name, its depth and time. */
function isEvent(line: unknown): line is TranscriptLine {
  if (typeof line !== 'object' || line === null) return false;
  const { type, path, agent, depth, time } = line as Record<string, unknown>;
  return (
    typeof type === 'string' &&
    typeof path === 'string' &&
    typeof agent === 'string' &&
    typeof depth === 'number' &&
    typeof time === 'number'
  );
}

export async function removeRun(dir: string, id: string): Promise<void> {
  await fsPromises().rm(join(dir, id), { recursive: true, force: true });
}

/**
 * Removes all but the newest `keep` runs, except runs still going (another axe writing its
 * record); the number removed.
 */
export async function pruneRuns(dir: string, keep: number): Promise<number> {
  let removed = 0;
  for (const id of (await runIds(dir)).slice(keep)) {
    if (await stillRunning(dir, id)) continue;
    await removeRun(dir, id);
    removed++;
  }
  return removed;
}

/** A record being made has no run.json for a moment: taken for a live one while it is this young. */
const MAKING_RECORD_MS = 60_000;

async function stillRunning(dir: string, id: string): Promise<boolean> {
  try {
    return isLive(await readRunRecord(dir, id));
  } catch {
    // Another axe between making its run's directory and writing its run.json.
    try {
      const { mtimeMs } = await fsPromises().stat(join(dir, id));
      return Date.now() - mtimeMs < MAKING_RECORD_MS;
    } catch {
      return false;
    }
  }
}
