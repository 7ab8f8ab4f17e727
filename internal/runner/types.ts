import type { AgentSpec } from '../agent/spec.js';
import type { ArtifactEntry } from '../artifacts/artifacts.js';
import type { Budget } from '../budget/budget.js';
import type { CassettePlayer, CassetteRecorder } from '../cassette/cassette.js';
import type { GlobalConfig } from '../config/global.js';
import type { HttpPool } from '../http/pool.js';
import type { JsonValue, Message, Usage } from '../provider/types.js';
import type { RateGates } from '../ratelimit/gates.js';
import type { AgentStatus, EmitEvent, TraceLinks } from './events.js';
import type { AskPerson } from './questions.js';

/**
 * What `cmd/run.ts` hands the runner for a top-level run. Everything is already resolved from
 * flags, env and files; the runner reads no argv and writes nothing to stdout/stderr itself —
 * everything it has to say goes through `emit`.
 */
export interface RunRequest {
  spec: AgentSpec;
  /** The user message of the top-level agent. */
  input: string;
  env: NodeJS.ProcessEnv;
  /** Agent search dirs, in lookup order (sub-agents are loaded from the same dirs). */
  searchDirs: string[];
  configDir: string;
  /** config.toml of `configDir`, loaded when first asked for (a caller that also reads it shares one load). */
  globalConfig: () => Promise<GlobalConfig>;
  /**
   * The run's connection pool when the caller made it ahead (the CLI opens the first connection
   * while it reads stdin); closed with the run, like one the run makes itself.
   */
  pool?: HttpPool;
  /** `--model provider/model` (top-level agent only). */
  modelOverride?: string;
  /** `--skill` (top-level agent only). */
  skillOverride?: string;
  /** `--workdir` (top-level agent only). */
  workdirOverride?: string;
  /**
   * The directory relative workdirs (an agent's `workdir`, `--workdir`, none at all) are resolved
   * against, for every agent of the run (default: the process's). A queue worker runs each batch in
   * its stored agent tree this way, many at once in one process.
   */
  cwd?: string;
  /** `--artifact-dir` (top-level agent only; turns its artifact system on). */
  artifactDirOverride?: string;
  /** `--input name=value` / `--inputs-json`: the top-level agent's typed inputs, unchecked. */
  inputs?: Record<string, JsonValue>;
  /** `--keep-artifacts`: auto-generated artifact directories outlive the run. */
  keepArtifacts?: boolean;
  /** Deadline of the whole run, seconds, counted from `startedAt` (default: now). */
  timeoutSeconds: number;
  /** Date.now() when the run began (the CLI's start, so reading stdin counts against the deadline). */
  startedAt?: number;
  /** Tree-wide token budget (`--max-tokens`, else `[budget] max_tokens`). */
  maxTokens?: number;
  /**
   * A budget shared with other runs (a batch's `--max-cost` / `--max-tokens`): every call of this
   * run also reserves in it and counts in it; once it is spent no call of this run starts.
   */
  sharedBudget?: Budget;
  /**
   * The providers' rate gates, shared with other runs (a batch hands one to all its items): a
   * 429 seen by one run holds back the requests of all. Without it the run makes its own.
   */
  rateGates?: RateGates;
  /** Stream the top-level agent's final answer (text.delta events with depth 0). */
  stream: boolean;
  /** Cassette to write (`--record`) or to serve from (`--replay`). */
  record?: string;
  replay?: string;
  /**
   * A batch's items share these, opened and closed (published) by the batch, not by each run: the
   * connection pool (one per provider for the whole batch) and the one cassette.
   */
  shared?: { pool?: HttpPool; player?: CassettePlayer; recorder?: CassetteRecorder };
  /** Aborted by the CLI on SIGINT / SIGTERM; its `reason` is a CancelledError. */
  signal: AbortSignal;
  /** `--interactive` at a terminal: the top-level agent's `ask_parent` questions go to the person. */
  askPerson?: AskPerson;
  emit: EmitEvent;
  /** When the run is traced (telemetry/): the spans its tools' processes continue. */
  trace?: TraceLinks;
  /** `--continue` / `--resume`: the conversation the top-level agent starts from. */
  prior?: PriorConversation;
  /** `--resume`: results of the picked-up run's children that completed, by `reuseKey`. */
  reuse?: ReadonlyMap<string, AgentRunResult>;
}

/** One tool call of an agent, as the JSON envelope reports it. */
export interface ToolCallDetail {
  name: string;
  input: unknown;
  /** At most 1024 bytes of the output, then `... (truncated)` (see `detailOutput`). */
  output: string;
  isError: boolean;
  /** 1-based, as the `[turn N]` lines count. */
  turn: number;
  durationMs: number;
}

/** The outcome of one agent run: the top-level one, or a sub-agent call inside the tree. */
export interface AgentRunResult {
  agent: string;
  path: string;
  depth: number;
  status: AgentStatus;
  /** The final answer (or the answer so far, when the run stopped early). */
  content: string;
  /** The value its `submit_result` handed over (agents with `[output]`). */
  output?: JsonValue;
  /** `provider/model` as served. */
  model: string;
  stopReason: string;
  /** This agent's own provider calls, summed over its turns (children not included). */
  usage: Usage;
  cost?: number;
  /** OpenRouter's cache status of the last call (Go axe's `cache_status`). */
  cacheStatus?: string;
  /** Why the last call was refused or blocked (the provider's reason), when it was. */
  refusal?: string;
  retries: number;
  turns: number;
  durationMs: number;
  toolCalls: number;
  toolCallDetails: ToolCallDetail[];
  /** Files its successful `read_file` calls read, and `write_file` / `edit_file` calls changed. */
  filesRead: string[];
  filesModified: string[];
  /** Sub-agent calls made by this agent, in call order, each with its own children. */
  children: AgentRunResult[];
  /** Set when status is not completed. */
  error?: string;
  /** Set when the agent's own limit stopped it (`budget exceeded — 15 of 15 tool calls`): not a failure. */
  stopped?: string;
}

export interface RunOutcome {
  result: AgentRunResult;
  /** Tree-wide token use (input + output of every call), and the limit when there was one. */
  budget: { used: number; limit?: number };
  /**
   * Set when the run as a whole failed (turn limit, provider error of the top-level agent, budget,
   * cancel). `result.content` then holds the answer so far.
   */
  error?: import('../errors.js').AxeError;
  /** Files written into the run's artifact directory; absent when the top-level agent has none. */
  artifacts?: ArtifactEntry[];
}

/**
 * A conversation an agent starts from instead of its task alone:
 * - `fork` (`fork_context`): its caller's messages, ending with the assistant turn calling it, and
 *   the caller's provider (reasoning and signatures carry over only to the same one); then the fork
 *   boundary and the task;
 * - `follow` (`--continue`, call_agent's `resume`): an earlier conversation of its own, then the task;
 * - `pick-up` (`--resume`): a conversation that stopped, as recorded: calls left unanswered run
 *   first, and the task is not sent again.
 */
export type PriorConversation =
  | { kind: 'fork'; messages: readonly Message[]; provider: string }
  | { kind: 'follow'; messages: readonly Message[]; earlier?: EarlierCalls }
  | { kind: 'pick-up'; messages: readonly Message[]; earlier?: EarlierCalls };

/**
 * `--resume`, `--continue`: the sub-agents of the recorded run the top-level agent's conversation
 * comes from. Its agent_ids are in that conversation, so the new run's calls are numbered after
 * them (a `resume` or `task_output` of an earlier id never reaches another sub-agent), and the
 * finished ones can be continued with call_agent's `resume`.
 */
export interface EarlierCalls {
  /** The highest call number each tool used (`call_agent` → 3 for `lead/call_agent#3:helper`). */
  numbers: Readonly<Record<string, number>>;
  /** The finished sub-agents' conversations as recorded, by agent_id (as `conversations`). */
  conversations: ReadonlyMap<string, { agent: string; messages: readonly Message[] }>;
}
