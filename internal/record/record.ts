import type { ProcessIdentity } from '../process-alive.js';
import type { JsonValue, Usage } from '../provider/types.js';
import type { AgentStatus, RunEvent } from '../runner/events.js';

/**
 * The record a run leaves under `<data dir>/runs/<run-id>/`: `run.json` (this `RunRecord`,
 * rewritten atomically when the run starts and when it ends) and one transcript per agent of the
 * tree, `agents/<nnnn>-<agent>.jsonl`, appended as the run goes — every line one event of that
 * agent (`TranscriptLine`). The transcripts are the truth: a run killed mid-way still has them, and
 * `axe runs show` builds the tree from them.
 */
export const RUN_RECORD_VERSION = 1;

/**
 * The most `axe runs` reads of a `run.json`, above what axe writes there: the message is held
 * twice (`request.input`, the tree's `task`), and piped stdin (READ_LIMITS.stdin, 16 MiB) is up to
 * 6 times its bytes as JSON (a control character is `\u0001`): 192 MiB; what came in flags (`-p`,
 * `--input`) is within the kernel's limit on arguments (6 MiB, 36 MiB as JSON). The tree, whose
 * tasks and errors are the models', has no bound of its own: the recorder leaves it out of a
 * run.json it would take past this (the transcripts hold it).
 */
export const RUN_JSON_MAX = 256 * 2 ** 20;

/** `running` until the run ends; a run killed before it could say how it ended stays `running`. */
export type RecordStatus = 'running' | AgentStatus;

/** How the run was asked for: enough to run it again (`--resume`) or to continue it. */
export interface RecordedRequest {
  /** The agent's CLI name and the file it was loaded from. */
  agent: string;
  agentFile: string;
  /** A fingerprint of the agent file when the run started (`fileDigest`). */
  agentDigest: string;
  /** The top-level user message. */
  input: string;
  inputs: Record<string, JsonValue>;
  cwd: string;
  agentsDirs: string[];
  model?: string;
  /** `--system`: the top-level agent's system prompt in place of its file's. */
  system?: string;
  skill?: string;
  workdir?: string;
  artifactDir?: string;
  timeoutSeconds: number;
  maxTokens?: number;
  stream: boolean;
  replay?: string;
}

export interface RunRecord {
  version: typeof RUN_RECORD_VERSION;
  id: string;
  pid: number;
  /**
   * What tells the process that ran it from another that later has its pid (Linux: its start
   * time, the boot, the host name). Absent from records written before axe kept it, and where
   * `/proc` does not tell it (macOS): their run is told by its pid alone.
   */
  process?: ProcessIdentity;
  request: RecordedRequest;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  status: RecordStatus;
  exitCode?: number;
  error?: string;
  /** Input + output tokens of every call in the tree, and each kind summed. */
  usage?: Usage & { total: number };
  cost?: number;
  /** The run this one resumed (`--resume`) or continued (`--continue`). */
  resumedFrom?: string;
  continuedFrom?: string;
  /** The batch (`axe run --map`) this run is an item of. */
  batch?: string;
  /** The run that resumed this one (`resumed-by.json`, see claimResume): read, never written here. */
  resumedBy?: string;
  /** The outcome tree, as `--json` reports it (written when the run ends). */
  tree?: RecordedAgent;
}

/** How a run ended: what `run.json` says of it once it did. */
export type RunEnding = Required<
  Pick<RunRecord, 'endedAt' | 'durationMs' | 'status' | 'exitCode' | 'usage'>
> &
  Pick<RunRecord, 'error' | 'cost'>;

/**
 * `<run dir>/ended.json`, a `RunEnding`: written when the run ends, just before `run.json`'s last
 * write, into space the record kept for it from its start (`RESERVE_FILE`), so that a run.json a
 * full disk left at `running` does not make an ended run look interrupted (and resumable).
 */
export const ENDED_FILE = 'ended.json';

/**
 * `<run dir>/.reserved`: RESERVED_BYTES the record holds from its start, freed for `ENDED_FILE`
 * (a few hundred bytes; its error is cut to fit). One page of the usual file systems: no more,
 * or what it frees would be taken by the last transcript lines or run.json instead.
 */
export const RESERVE_FILE = '.reserved';
export const RESERVED_BYTES = 4096;

/**
 * A tool's output longer than OUTPUT_INLINE_MAX (UTF-16 units) is not written into the transcript
 * (twice: its `tool.end` and the tool message) but once, to `<run dir>/outputs/<nnnn>.txt`; the
 * lines hold a reference to it instead (`outputRef` beside an empty `output`, `contentRef` beside an
 * empty `content`), put back when the transcript is read. So a transcript stays a size axe reads
 * back, whatever a run's tools return (17 reads of a 9 MB file were a 292 MiB transcript).
 */
export const OUTPUT_INLINE_MAX = 64 * 1024;

/** Where a tool's output is (relative to the run's directory), and its bytes. */
export interface OutputRef {
  file: string;
  bytes: number;
}

/** One agent of the tree, as the transcripts tell it. */
export interface RecordedAgent {
  path: string;
  agent: string;
  depth: number;
  /** The caller's tool call that started it. */
  callId?: string;
  task: string;
  /** What the call is for in a few words, when its caller said (`call_agent`'s `description`). */
  description?: string;
  model: string;
  status: RecordStatus;
  /** Epoch ms. */
  startedAt: number;
  endedAt?: number;
  durationMs?: number;
  turns: number;
  toolCalls: number;
  /** Where it is (or was when its transcript ends): its last turn, the tools in flight, a retry. */
  lastTurn?: number;
  inTools?: string[];
  retry?: number;
  /** Its own calls: its turns so far, the total once it ended. */
  usage: Usage;
  cost?: number;
  error?: string;
  /** Its transcript, relative to the run's directory. */
  transcript: string;
  children: RecordedAgent[];
}

/** One line of a transcript: an event of the agent, with its caller's path. */
export type TranscriptLine = RunEvent & { parent?: string };
