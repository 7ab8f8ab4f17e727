import { setMaxListeners } from 'node:events';
import { followParent, MAX_TIMER_MS } from '../abort.js';
import { loadAgent } from '../agent/load.js';
import { qualifiedModelName } from '../agent/model.js';
import type { AgentSpec, ModelRef } from '../agent/spec.js';
import type { ArtifactManifest } from '../artifacts/artifacts.js';
import type { Budget } from '../budget/budget.js';
import type { CacheWarmup } from '../fanout/cache-warmup.js';
import type { Price } from '../prices/price.js';
import type { JsonValue, Message, Provider, ProviderApi } from '../provider/types.js';
import type { EmitEvent, RunEventBody, TraceLinks } from './events.js';
import type { Limiter } from './limiter.js';
import type { LimitScope } from './limits.js';
import type { Approve, AskParent, AskPerson } from './questions.js';
import { type ResolvedAgentRun, resolveAgentRun } from './resolve.js';
import type { AgentRunResult, PriorConversation } from './types.js';

/** Makes the provider that serves an agent: live (optionally recorded) or from a cassette. */
export interface ProviderSource {
  /**
   * The provider an agent talks to, and its API and `host:port` when live (a cassette has none).
   * Throws a ConfigError for an unknown provider or a missing required key (live only).
   */
  forAgent(
    model: ModelRef,
    spec: AgentSpec,
    agentPath: string,
  ): { provider: Provider; api?: ProviderApi; server?: string };
  /**
   * What the model's tokens cost (config.toml's `[prices]`, else the price table); undefined when
   * unknown. Asked only while a budget caps dollars: it loads the price table.
   */
  priceOf(model: ModelRef): Price | undefined;
}

/** The abort reason when a deadline fires (the run's, or a sub-agent's own): a timeout, not a cancel. */
export class RunDeadline extends Error {
  constructor(readonly seconds: number) {
    super(`timeout after ${seconds}s`);
  }
}

/** Everything one run shares down the agent tree, plus where in the tree this agent is. */
export interface RunContext {
  /** `reviewer`, `reviewer/call_agent#2:tester`, … */
  readonly path: string;
  /** 0 for the top-level agent. */
  readonly depth: number;
  /** Tree-wide: the top-level agent's `max_depth`. */
  readonly maxDepth: number;
  readonly signal: AbortSignal;
  /** Epoch ms when this agent's deadline passes (the run's, or its own when earlier)... */
  readonly deadline: number | undefined;
  /** ...and that deadline's timeout in seconds, for `timeout after <N>s`. */
  readonly deadlineSeconds: number | undefined;
  readonly budget: Budget;
  /** This agent's own limits, nested in its callers' (tool calls, tokens, turns). */
  readonly limits: LimitScope;
  readonly limiter: Limiter;
  readonly emit: EmitEvent;
  /** When the run is traced: the span context its tools hand to the processes they start. */
  readonly trace?: TraceLinks | undefined;
  readonly providers: ProviderSource;
  /**
   * Loads a sub-agent's file from the search dirs, `$VAR`s expanded from `env` (the parent's, with
   * the run's `AXE_ARTIFACT_DIR`); each name is read once per run.
   */
  readonly loadAgent: (name: string, env: NodeJS.ProcessEnv) => Promise<AgentSpec>;
  /** Resolves model, workdir, prompt and tools of an agent about to run here (see `agentResolver`). */
  readonly resolveAgent: (spec: AgentSpec, ctx: RunContext) => Promise<ResolvedAgentRun>;
  readonly env: NodeJS.ProcessEnv;
  readonly configDir: string;
  /** config.toml's `[defaults] prompt_caching`, for agents that do not set it (run-agent.ts). */
  readonly promptCachingDefault?: boolean | undefined;
  /** Its parent's `cache_warmup`: this agent's first request waits for a sibling's with the same prefix. */
  readonly warmup?: CacheWarmup | undefined;
  /** Its own `cache_warmup`, handed to the agents it starts. */
  readonly childWarmup?: CacheWarmup | undefined;
  /** Emit text.delta events for this agent's streamed text (with --stream: the top-level agent, and the sub-agents that stream). */
  readonly stream: boolean;
  /** The model an agent with `model = inherit` uses: the parent's. */
  readonly inheritedModel: ModelRef | undefined;
  /** The parent's effective `allowed_hosts`, used by an agent that sets none (empty at the top). */
  readonly inheritedAllowedHosts: readonly string[];
  /** The values of this agent's typed inputs, as its caller passed them (checked when it resolves). */
  readonly inputs: Readonly<Record<string, JsonValue>>;
  /** A caller up the tree is read-only (its file, or the call's `read_only`): so is this agent. */
  readonly readOnly: boolean;
  /** The call's `tools` override: this agent offers only these of its tools (this run only). */
  readonly onlyTools?: readonly string[];
  /** The conversation this agent starts from (this run only). */
  readonly prior?: PriorConversation;
  /** `--interactive`: questions that reach the top-level agent go to the person. */
  readonly askPerson?: AskPerson;
  /** `ask_parent`: how this sub-agent's questions reach its caller (this run only). */
  readonly askParent?: AskParent;
  /** A sub-agent's calls above its tier go to its caller for approval (this run only). */
  readonly approve?: Approve;
  /** A sub-agent's caller's signal and deadline: what its grace turn may not outlive. */
  readonly caller?: {
    signal: AbortSignal;
    deadline: number | undefined;
    deadlineSeconds: number | undefined;
  };
  /**
   * `--workdir` was given: every `call_agent` child with no workdir of its own runs in its
   * caller's (as a child of a Codex, Claude, Gemini or opencode file always does).
   */
  readonly workdirGiven: boolean;
  /** `--model`, `--skill`, `--workdir`: they apply to the top-level agent (depth 0) only. */
  readonly overrides: { model?: string; skill?: string; workdir?: string; artifactDir?: string };
  /** The files written into the run's artifact directory (run-wide). */
  readonly artifacts: ArtifactManifest;
  /** `--keep-artifacts`. */
  readonly keepArtifacts: boolean;
  /**
   * Run-wide: the conversations of the sub-agents whose callers may `resume` them, by agent_id
   * (with `--resume` / `--continue`, first those of the run picked up, `EarlierCalls`);
   * and (`--resume`) the results of children that completed in the run picked up, by `reuseKey`.
   */
  readonly conversations: Map<string, { agent: string; messages: readonly Message[] }>;
  readonly reuse?: ReadonlyMap<string, AgentRunResult>;
}

export interface DeadlineScope {
  /** Aborts with the parent signal's reason, or with a RunDeadline when the timeout passes. */
  controller: AbortController;
  /** Epoch ms when the timer fires; undefined without a timeout. */
  deadline: number | undefined;
  /** Clears the timer and stops listening to the parent signal. */
  dispose(): void;
}

/** A signal that follows `parent` and, when `seconds > 0`, fires on its own that long after `startedAt`. */
export function deadlineScope(parent: AbortSignal, seconds: number, startedAt = Date.now()): DeadlineScope {
  const timeoutMs = Math.min(seconds * 1000 - (Date.now() - startedAt), MAX_TIMER_MS);
  const { controller, dispose } = followParent(
    parent,
    seconds > 0 ? { ms: timeoutMs, reason: () => new RunDeadline(seconds) } : undefined,
  );
  // Every child, queued call and budget wait of a fan-out listens to this signal: hundreds of
  // listeners are the design, not a leak (Node warns past 10).
  setMaxListeners(0, controller.signal);
  return { controller, deadline: seconds > 0 ? Date.now() + timeoutMs : undefined, dispose };
}

/**
 * The run's sub-agent loader. A fan-out to 32 calls of the same agent reads and validates its
 * file once; a failed load fails the same way for every call.
 */
export function agentLoader(searchDirs: readonly string[]): RunContext['loadAgent'] {
  const dirs = [...searchDirs];
  const loaded = new Map<string, Promise<AgentSpec>>();
  return (name, env) => {
    let spec = loaded.get(name);
    if (!spec) {
      spec = loadAgent(name, { searchDirs: dirs, env });
      loaded.set(name, spec);
    }
    return spec;
  };
}

/**
 * The run's agent resolver. Runs of the same agent file at the same depth with the same inherited
 * model that start while one resolution is in flight (the calls of a fan-out) share it: one
 * workdir lookup and one read of the skill and context files instead of one per call. Once it
 * settles it is dropped, so a later call reads the files afresh, as every call does in Go axe.
 */
export function agentResolver(cwd?: string): RunContext['resolveAgent'] {
  const inFlight = new Map<string, Promise<ResolvedAgentRun>>();
  return (spec, ctx) => {
    const inherited = ctx.inheritedModel ? qualifiedModelName(ctx.inheritedModel) : '';
    // A call's overrides and a spawned worker change the spec (model, system prompt, workdir,
    // memory, spawning): part of the key.
    const own = spec.model ? qualifiedModelName(spec.model) : '';
    const key = JSON.stringify([
      spec.source,
      own,
      spec.systemPrompt,
      spec.workdir,
      spec.memory.enabled,
      spec.subAgentsConfig.spawn,
      ctx.depth,
      inherited,
      ctx.overrides,
      ctx.inputs,
    ]);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const resolution = resolveAgentRun(spec, {
      configDir: ctx.configDir,
      ...(cwd !== undefined ? { cwd } : {}),
      depth: ctx.depth,
      maxDepth: ctx.maxDepth,
      inheritedModel: ctx.inheritedModel,
      overrides: ctx.overrides,
      inputs: ctx.inputs,
      env: ctx.env,
    }).finally(() => inFlight.delete(key));
    inFlight.set(key, resolution);
    return resolution;
  };
}

/** `allowed_hosts` of an agent: its own when it sets any, else the one it inherits. */
export function effectiveAllowedHosts(spec: AgentSpec, ctx: RunContext): string[] {
  return spec.allowedHosts.length > 0 ? spec.allowedHosts : [...ctx.inheritedAllowedHosts];
}

/** Emits an event stamped with this agent's place in the tree. */
export function emitEvent(ctx: RunContext, agent: string, body: RunEventBody): void {
  ctx.emit({ path: ctx.path, agent, depth: ctx.depth, time: Date.now(), ...body });
}

/** Of two timeouts in seconds (0 or undefined: none), the one that ends first. */
export function shorterTimeout(a: number, b: number | undefined): number {
  if (b === undefined || b <= 0) return a;
  return a > 0 && a <= b ? a : b;
}
