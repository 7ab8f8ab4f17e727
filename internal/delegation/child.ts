import { DELEGATED_DEFAULTS } from '../agent/delegated-limits.js';
import { AgentFileError } from '../agent/load.js';
import { parseModelRef, qualifiedModelName } from '../agent/model.js';
import type { AgentSpec, ModelRef } from '../agent/spec.js';
import { errorMessage } from '../errors.js';
import { childStarts } from '../fanout/start-pacer.js';
import type { JsonObject, JsonValue, Message } from '../provider/types.js';
import { reuseKey } from '../runner/agent-path.js';
import { effectiveAllowedHosts, emitEvent, type RunContext, shorterTimeout } from '../runner/context.js';
import type { AskParent } from '../runner/questions.js';
import { failedBeforeStart, outcomeOf, type SettledRun } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';
import { CALL_AGENT_TOOL_NAME, DELEGATE_TASK_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME } from '../tools/types.js';
import { childApproval, type ParentApprover } from './approval.js';
import type { BackgroundChildren } from './background.js';
import { childContext } from './child-context.js';

/**
 * Starting a child agent: the one primitive under every delegation tool (`call_agent`,
 * `spawn_agents`, `delegate_task`, background launches). Each tool only says which spec runs with
 * which message; the child's context, limits, events and outcome are made here.
 */

/** How a child is run: `runAgentSettled`, passed in to keep one code path without an import cycle. */
export type RunSettled = (spec: AgentSpec, input: string, ctx: RunContext) => Promise<SettledRun>;

/** The agent that starts children. */
export interface ParentRun {
  spec: AgentSpec;
  ctx: RunContext;
  /** Its model: a child whose file says `inherit` uses it. */
  model: ModelRef;
  /** Its workdir, resolved: a spawned task's `cwd` stays inside it. */
  workdir: string;
  runSettled: RunSettled;
  /** Its background children, when `background = true`. */
  background?: BackgroundChildren;
  /** Answers a child's requests for tools above its tier. */
  approve?: ParentApprover;
  /** Answers a child's `ask_parent`, when `ask_parent = true`. */
  ask?: (
    agent: string,
    history: readonly Message[],
    question: string,
    signal: AbortSignal,
    deadline: number | undefined,
  ) => Promise<string>;
}

/** What one call may change of the agent it runs (`overrides = true`; every `spawn_agents` task). */
export interface CallOverrides {
  model?: string;
  tools?: string[];
  systemPrompt?: string;
  readOnly?: boolean;
  maxToolCalls?: number;
}

export interface ChildRequest {
  /** The child's name in events and the tree. */
  agent: string;
  /** Its step in the tree's paths: `call_agent#2`, `spawn_agents#1.3`. */
  step: string;
  /** The spec it runs (overrides applied), or why it cannot start. */
  prepared: { spec: AgentSpec } | { error: string };
  /** The task, as events show it. */
  task: string;
  /** What the call is for in a few words (`call_agent`'s `description`), shown in events and the tree. */
  description?: string;
  /** Its user message. */
  message: string;
  inputs: JsonObject;
  overrides: CallOverrides;
  /** The parent's conversation so far, for a child that forks it. */
  history: readonly Message[];
  /** The parent's tool call that starts it. */
  callId: string;
  /** call_agent's `resume`: the earlier conversation of the agent it continues. */
  resume?: readonly Message[];
  /** Started in the background: its tier is `read` unless its file sets one. */
  background?: boolean;
  /** A worker: the tools it may use at most (its caller's own), whatever its task's `tools` say. */
  onlyTools?: readonly string[];
  /**
   * Delegated work (a `spawn_agents` worker, a `delegate_task` sub-task): a limit that nothing
   * else sets takes its default (`DELEGATED_DEFAULTS`).
   */
  delegated?: boolean;
}

/**
 * Runs one child to its outcome; never throws. Its limits: the smallest of its own, the parent's
 * `[sub_agents_config]` defaults and the call's (tool calls and turns its own, tokens nested in the
 * parent's); its timeout likewise.
 */
export async function startChild(parent: ParentRun, request: ChildRequest): Promise<AgentRunResult> {
  const turn = childStarts.turn();
  if (turn) await turn;
  const started = Date.now();
  const { overrides } = request;
  const prepared = backgroundTier(request);
  const own = 'spec' in prepared ? prepared.spec.budget : {};
  const defaults = parent.spec.subAgentsConfig;
  const fallback = request.delegated ? DELEGATED_DEFAULTS : undefined;
  const timeout = shorterTimeout(defaults.timeout, own.timeout);
  const toolCalls = smallest(
    'maxToolCalls',
    own.maxToolCalls,
    defaults.childMaxToolCalls,
    overrides.maxToolCalls,
  );
  const tokens = smallest('maxTokens', defaults.childMaxTokens);
  const child = childContext(parent.ctx, {
    agent: request.agent,
    step: request.step,
    timeoutSeconds: timeout > 0 ? timeout : (fallback?.timeoutSeconds ?? 0),
    parentModel: parent.model,
    parentAllowedHosts: effectiveAllowedHosts(parent.spec, parent.ctx),
    inputs: request.inputs,
    // A child's own `[budget] max_tokens` stays unread, as in Go axe: the caller caps tokens.
    limits: parent.ctx.limits.child({
      ...(toolCalls.maxToolCalls === undefined && fallback
        ? { maxToolCalls: fallback.maxToolCalls }
        : toolCalls),
      ...smallest('maxTurns', own.maxTurns, defaults.childMaxTurns),
      ...(tokens.maxTokens === undefined && fallback ? { maxTokens: fallback.maxTokens } : tokens),
    }),
    readOnly: parent.ctx.readOnly || parent.spec.readOnly || overrides.readOnly === true,
    stream: parent.ctx.stream && childStreams(request),
    ...narrowest(request.onlyTools, overrides.tools),
    ...(request.resume
      ? { prior: { kind: 'follow', messages: request.resume } }
      : 'spec' in prepared && prepared.spec.forkContext
        ? { prior: { kind: 'fork', messages: [...request.history], provider: parent.model.provider } }
        : {}),
    ...(parent.ask ? { askParent: askParentOf(parent.ask, parent, request) } : {}),
    ...(parent.approve
      ? {
          approve: childApproval(parent.approve, request.history, parent.spec.subAgentsConfig.maxQuestions),
        }
      : {}),
  });
  try {
    const { ctx } = child;
    const model = 'spec' in prepared ? (prepared.spec.model ?? parent.model) : undefined;
    emitEvent(ctx, request.agent, {
      type: 'agent.start',
      model: model ? qualifiedModelName(model) : '',
      task: request.task,
      ...(request.description !== undefined ? { description: request.description } : {}),
      callId: request.callId,
    });
    const where = { agent: request.agent, path: ctx.path, depth: ctx.depth };
    const reused = parent.ctx.reuse?.get(
      reuseKey(parent.ctx.path, request.callId, request.step, request.agent),
    );
    const resumable = parent.spec.subAgentsConfig.resume;
    let result: AgentRunResult;
    if (reused) {
      result = { ...reused, ...where };
      // Reused under a new agent_id: `resume` of it continues the conversation it had.
      const earlier = resumable ? ctx.conversations.get(reused.path) : undefined;
      if (earlier) ctx.conversations.set(ctx.path, earlier);
    } else if ('spec' in prepared) {
      const settled = await parent.runSettled(prepared.spec, request.message, ctx);
      result = settled.result;
      if (resumable && settled.conversation) {
        ctx.conversations.set(ctx.path, { agent: request.agent, messages: settled.conversation });
      }
    } else result = failedBeforeStart(where, 'error', prepared.error, Date.now() - started);
    emitEvent(ctx, request.agent, {
      type: 'agent.end',
      ...outcomeOf(result),
    });
    return result;
  } finally {
    child.dispose();
  }
}

/** A background child's spec: tier `read` unless its file gives one. */
function backgroundTier(request: ChildRequest): ChildRequest['prepared'] {
  const { prepared } = request;
  if (!request.background || !('spec' in prepared) || prepared.spec.tier !== undefined) return prepared;
  return { spec: { ...prepared.spec, tier: 'read' } };
}

/**
 * Whether a child of a streaming caller streams too. Go axe never streams a sub-agent: a Go TOML
 * file started by `call_agent` keeps Go's request bytes; a child of the other formats, and every
 * child of `spawn_agents` and `delegate_task`, streams its text as `text.delta` events.
 */
function childStreams(request: ChildRequest): boolean {
  if (!('spec' in request.prepared)) return false;
  return request.prepared.spec.format !== 'toml' || !request.step.startsWith(`${CALL_AGENT_TOOL_NAME}#`);
}

/** How this child's questions reach its parent: with the parent's conversation up to the call. */
function askParentOf(
  ask: NonNullable<ParentRun['ask']>,
  parent: ParentRun,
  request: ChildRequest,
): AskParent {
  return {
    ask: (question, signal, deadline) => ask(request.agent, request.history, question, signal, deadline),
    maxQuestions: parent.spec.subAgentsConfig.maxQuestions,
  };
}

/**
 * The parameters of what one call (`call_agent` with `overrides = true`) or one `spawn_agents`
 * task may change of the agent it runs; `whose` tools and prompt, for `unit`.
 */
export function overrideParameters(whose: string, unit: string): JsonObject {
  return {
    model: {
      type: 'string',
      description: `Model for ${unit}, provider/model or an alias (default: ${whose} own)`,
    },
    tools: {
      type: 'array',
      items: { type: 'string' },
      description: `Only these of ${whose} tools for ${unit} (default: all of them)`,
    },
    system_prompt: { type: 'string', description: `Replaces ${whose} system prompt for ${unit}` },
    read_only: {
      type: 'boolean',
      description: `No file writes, edits or commands for ${unit} and the agents it calls`,
    },
    max_tool_calls: {
      type: 'integer',
      minimum: 1,
      description: `Most tool calls for ${unit} (${whose} own limits still apply)`,
    },
  };
}

/** Checks a call's override arguments; `tool` names the tool in the errors. */
export function overrideArgs(args: JsonObject, tool: string): CallOverrides | { error: string } {
  const given = (name: string): JsonValue | undefined =>
    args[name] === null || args[name] === '' ? undefined : args[name];
  const wrong = (name: string, what: string) => ({
    error: `${tool} error: "${name}" argument must be ${what}`,
  });
  const overrides: CallOverrides = {};
  const model = given('model');
  if (model !== undefined) {
    if (typeof model !== 'string') return wrong('model', 'a string');
    overrides.model = model;
  }
  const tools = given('tools');
  if (tools !== undefined) {
    if (!Array.isArray(tools) || !tools.every((t) => typeof t === 'string'))
      return wrong('tools', 'a list of tool names');
    overrides.tools = tools as string[];
  }
  const prompt = given('system_prompt');
  if (prompt !== undefined) {
    if (typeof prompt !== 'string') return wrong('system_prompt', 'a string');
    overrides.systemPrompt = prompt;
  }
  const readOnly = given('read_only');
  if (readOnly !== undefined) {
    if (typeof readOnly !== 'boolean') return wrong('read_only', 'true or false');
    overrides.readOnly = readOnly;
  }
  const maxToolCalls = given('max_tool_calls');
  if (maxToolCalls !== undefined) {
    if (typeof maxToolCalls !== 'number' || !Number.isInteger(maxToolCalls) || maxToolCalls < 1)
      return wrong('max_tool_calls', 'a whole number of at least 1');
    overrides.maxToolCalls = maxToolCalls;
  }
  return overrides;
}

/**
 * The agent as this call runs it. Its model, highest first: env `AXE_SUBAGENT_MODEL`, the call's
 * `model`, its own, the caller's (`inherit`); the call's `system_prompt` replaces its own.
 */
export function withOverrides(
  spec: AgentSpec,
  overrides: CallOverrides,
  env: NodeJS.ProcessEnv,
  tool: string,
): { spec: AgentSpec } | { error: string } {
  const forced = env.AXE_SUBAGENT_MODEL;
  const [label, text] =
    forced !== undefined && forced !== ''
      ? ['AXE_SUBAGENT_MODEL', forced]
      : overrides.model !== undefined
        ? ['"model" argument', overrides.model]
        : [undefined, undefined];
  let model = spec.model;
  if (text !== undefined) {
    try {
      model = parseModelRef(text);
    } catch (error) {
      return { error: `${tool} error: ${label}: ${errorMessage(error)}` };
    }
  }
  if (model === spec.model && overrides.systemPrompt === undefined) return { spec };
  const { model: _own, ...rest } = spec;
  return {
    spec: {
      ...rest,
      ...(model ? { model } : {}),
      ...(overrides.systemPrompt !== undefined ? { systemPrompt: overrides.systemPrompt } : {}),
    },
  };
}

/** A named sub-agent's own file, from the run's search dirs, and the model it runs with. */
export async function loadSpec(
  name: string,
  ctx: RunContext,
  tool: string,
): Promise<{ spec: AgentSpec } | { error: string }> {
  try {
    return { spec: await ctx.loadAgent(name, ctx.env) };
  } catch (error) {
    const what =
      error instanceof AgentFileError && error.field === 'model' ? 'invalid model for' : 'failed to load';
    return { error: `${tool} error: ${what} agent "${name}": ${errorMessage(error)}` };
  }
}

/**
 * The calling agent as a worker runs it (`spawn_agents`, an unnamed `delegate_task` sub-task):
 * its model, prompt, tools and sub-agents, in `workdir` (default its own); no spawning, no memory
 * of its own, not its `[output]`: `submit_result` / `submit_error` with free text instead.
 */
export function workerSpec(parent: ParentRun, workdir?: string): AgentSpec {
  const { output: _output, ...spec } = parent.spec;
  const skill = parent.ctx.overrides.skill || spec.skill;
  return {
    ...spec,
    ...(skill ? { skill } : {}),
    model: parent.model,
    workdir: workdir ?? parent.workdir,
    memory: { ...spec.memory, enabled: false },
    subAgentsConfig: { ...spec.subAgentsConfig, spawn: false, delegate: false },
    offersSubmit: true,
  };
}

/**
 * `{ onlyTools }` of a worker: the tools its caller was narrowed to (`tools` of the call that
 * started it; none: all), but for the delegation tools a worker never has.
 */
export function workerTools(parent: ParentRun): { onlyTools?: readonly string[] } {
  const only = parent.ctx.onlyTools;
  if (only === undefined) return {};
  return {
    onlyTools: only.filter((name) => name !== SPAWN_AGENTS_TOOL_NAME && name !== DELEGATE_TASK_TOOL_NAME),
  };
}

/** `{ onlyTools }`: the tools in both lists, or in the one given; nothing when neither is. */
function narrowest(
  most: readonly string[] | undefined,
  asked: readonly string[] | undefined,
): { onlyTools?: string[] } {
  if (most === undefined) return asked ? { onlyTools: [...asked] } : {};
  return { onlyTools: asked ? most.filter((name) => asked.includes(name)) : [...most] };
}

/** `{ [key]: the smallest of optional limits }`, or nothing when none is set. */
function smallest<K extends string>(key: K, ...limits: (number | undefined)[]): Partial<Record<K, number>> {
  const values = limits.filter((v): v is number => v !== undefined);
  return values.length === 0 ? {} : ({ [key]: Math.min(...values) } as Partial<Record<K, number>>);
}
