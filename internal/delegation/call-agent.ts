import { describeInput } from '../agent/inputs.js';
import type { AgentSpec, InputType, SubAgentsConfig } from '../agent/spec.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue, Message, ToolCall, ToolSpec } from '../provider/types.js';
import type { RunContext } from '../runner/context.js';
import type { ExecutedCall, ToolHandler } from '../runner/loop.js';
import { failureReason, toolFailure, treeUsage } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';
import { maskSecrets } from '../secrets.js';
import type { ToolOutput } from '../tools/types.js';
import { CALL_AGENT_TOOL_NAME } from '../tools/types.js';
import {
  type CallOverrides,
  type ChildRequest,
  loadSpec,
  overrideArgs,
  overrideParameters,
  type ParentRun,
  startChild,
  withOverrides,
} from './child.js';
import { callsBefore } from './child-context.js';
import { failedOutcome, outcomeText } from './outcome.js';

const JSON_STATUSES = 'completed, budget_exceeded, timeout, max_turns, cancelled or error';

/**
 * The `call_agent` tool definition, word for word as Go axe offers it; with
 * `result_format = "json"`, one sentence more says what a result holds.
 */
export function callAgentToolSpec(
  allowedAgents: readonly string[],
  config: Pick<SubAgentsConfig, 'resultFormat' | 'overrides' | 'background' | 'resume'>,
  subAgents: readonly AgentSpec[] = [],
  beyondGo = false,
): ToolSpec {
  const list = allowedAgents.join(', ');
  const typed = subAgents.filter((agent) => agent.inputs.length > 0);
  const json =
    config.resultFormat === 'json'
      ? ` Each result is a JSON object: status (${JSON_STATUSES}), result, agent_id, turns_used, tool_calls, total_tokens, duration_seconds, files_read, files_modified and, unless completed, error.`
      : '';
  return {
    name: CALL_AGENT_TOOL_NAME,
    description: `Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result. Available agents: ${list}${json}`,
    parameters: {
      type: 'object',
      properties: {
        agent: { type: 'string', description: `Name of the sub-agent to invoke (must be one of: ${list})` },
        task: { type: 'string', description: 'What you need the sub-agent to do' },
        context: { type: 'string', description: 'Additional context from your conversation to pass along' },
        ...(beyondGo ? DESCRIPTION_PARAMETER : {}),
        ...(typed.length > 0 ? { inputs: inputsParameter(typed) } : {}),
        ...(config.overrides ? overrideParameters("the agent's", 'this call') : {}),
        ...(config.background ? BACKGROUND_PARAMETER : {}),
        ...(config.resume ? RESUME_PARAMETER : {}),
      },
      required: ['agent', 'task'],
    },
  };
}

/** Offered to every caller but a Go-only file: shown in the live tree and the events. */
const DESCRIPTION_PARAMETER: JsonObject = {
  description: {
    type: 'string',
    description: 'A few words on what this call is for (3-5 words), shown to the person watching the run',
  },
};

/**
 * Whether a caller reaches beyond Go axe: any format but TOML, or a TOML file that uses axe's own
 * sub-agent fields. Only such a caller gets what Go's `call_agent` does not have (a `description`
 * argument, the available agents in an error), so a Go-only file keeps Go's requests.
 */
export function beyondGo(spec: AgentSpec): boolean {
  const config = spec.subAgentsConfig;
  return (
    spec.format !== 'toml' ||
    config.overrides ||
    config.background ||
    config.resume ||
    config.askParent ||
    config.spawn ||
    config.delegate ||
    config.resultFormat === 'json' ||
    spec.output !== undefined ||
    spec.inputs.length > 0
  );
}

/** `[sub_agents_config] resume = true`. */
const RESUME_PARAMETER: JsonObject = {
  resume: {
    type: 'string',
    description:
      'The agent_id of an earlier call of the same agent in this run: it continues that conversation, with this task as the next message',
  },
};

/** `[sub_agents_config] background = true`. */
const BACKGROUND_PARAMETER: JsonObject = {
  run_in_background: {
    type: 'boolean',
    description:
      'Start the sub-agent and return at once with its agent_id; collect its result with task_output',
  },
};

/**
 * `inputs`, offered only when a sub-agent declares typed inputs: what each one takes, and each
 * input's JSON type (a name two agents declare with different types is left untyped).
 */
function inputsParameter(agents: readonly AgentSpec[]): JsonObject {
  const each = agents.map((agent) => `${agent.name}: ${agent.inputs.map(describeInput).join('; ')}`);
  const properties: JsonObject = {};
  const clashing = new Set<string>();
  for (const input of agents.flatMap((agent) => agent.inputs)) {
    const type = INPUT_JSON_TYPES[input.type];
    const earlier = properties[input.name];
    if (earlier !== undefined && JSON.stringify(earlier) !== JSON.stringify(type)) clashing.add(input.name);
    else properties[input.name] = type;
  }
  for (const name of clashing) delete properties[name];
  return {
    type: 'object',
    description: `Typed inputs of the agent called, by name. ${each.join('. ')}.`,
    properties,
  };
}

/** Each input type as a JSON Schema. */
const INPUT_JSON_TYPES: Readonly<Record<InputType, JsonObject>> = {
  string: { type: 'string' },
  number: { type: 'number' },
  integer: { type: 'integer' },
  boolean: { type: 'boolean' },
  'string[]': { type: 'array', items: { type: 'string' } },
  'number[]': { type: 'array', items: { type: 'number' } },
};

/** The sub-agent's user message: `Task: <task>`, plus `\n\nContext:\n<context>` when given. */
export function subAgentUserMessage(task: string, context?: string): string {
  return context !== undefined && context !== '' ? `Task: ${task}\n\nContext:\n${context}` : `Task: ${task}`;
}

/**
 * The sub-agents' files that load, read once per run by the run's loader (so a later call does
 * not read them again); a file that fails to load fails only when `call_agent` names it, in the
 * spec's words.
 */
export async function loadSubAgents(names: readonly string[], ctx: RunContext): Promise<AgentSpec[]> {
  const settled = await Promise.allSettled([...new Set(names)].map((name) => ctx.loadAgent(name, ctx.env)));
  return settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
}

/**
 * The handler of `call_agent` calls for one agent run. It never throws: every failure becomes an
 * is_error result worded as Go axe words it, and the parent carries on.
 */
export function callAgentHandler(options: ParentRun): ToolHandler {
  // After those of the conversation it picks up: no agent_id in it is given again.
  let calls = callsBefore(options.ctx, CALL_AGENT_TOOL_NAME);
  return async (call: ToolCall, _turn: number, history: readonly Message[]): Promise<ExecutedCall> => {
    const args = validateArgs(call.arguments, options);
    if ('error' in args) return { output: toolFailure(args.error) };
    return runSubAgent(options, args, ++calls, history, call.id);
  };
}

type ValidArgs = {
  agent: string;
  task: string;
  context?: string;
  description?: string;
  inputs?: JsonObject;
  overrides: CallOverrides;
  background: boolean;
  /** The conversation `resume` names. */
  resume?: readonly Message[];
};

/**
 * The call's arguments, checked in Go axe's order — agent, task, context, the agent being in the
 * caller's list — so the first problem is the one Go reports; then the per-call
 * overrides, `run_in_background` and `resume` when the caller offers them.
 */
function validateArgs(args: JsonObject, options: ParentRun): ValidArgs | { error: string } {
  const agent = requiredStringArg(args, 'agent');
  if (typeof agent !== 'string') return agent;
  const task = requiredStringArg(args, 'task');
  if (typeof task !== 'string') return task;
  const { context } = args;
  if (context !== undefined && context !== null && typeof context !== 'string') {
    return { error: 'call_agent error: "context" argument must be a string' };
  }
  const { inputs } = args;
  if (inputs !== undefined && inputs !== null && !isObject(inputs)) {
    return { error: 'call_agent error: "inputs" argument must be an object' };
  }
  const extras = beyondGo(options.spec);
  if (!options.spec.subAgents.includes(agent)) {
    const available = extras ? ` (available: ${options.spec.subAgents.join(', ')})` : '';
    return { error: `call_agent error: agent "${agent}" is not in this agent's sub_agents list${available}` };
  }
  const description = extras ? args.description : undefined;
  if (description !== undefined && description !== null && typeof description !== 'string') {
    return { error: 'call_agent error: "description" argument must be a string' };
  }
  const { ctx } = options;
  // No depth check here: at the max depth call_agent is not among the agent's tools, so a call to
  // it never gets here. Go axe's check ("maximum sub-agent depth (N) reached") cannot be reached
  // either: its agent at the max depth has no tools, and the reply to a request without tools is
  // the answer, tool calls and all.
  const overrides = options.spec.subAgentsConfig.overrides ? overrideArgs(args, CALL_AGENT_TOOL_NAME) : {};
  if ('error' in overrides) return overrides;
  const background = options.background ? args.run_in_background : undefined;
  if (background !== undefined && background !== null && typeof background !== 'boolean') {
    return { error: 'call_agent error: "run_in_background" argument must be true or false' };
  }
  const resume = options.spec.subAgentsConfig.resume ? resumedConversation(args.resume, agent, ctx) : {};
  if ('error' in resume) return resume;
  return {
    agent,
    task,
    ...(typeof context === 'string' ? { context } : {}),
    ...(typeof description === 'string' && description.trim() !== ''
      ? { description: description.trim() }
      : {}),
    ...(isObject(inputs) ? { inputs } : {}),
    overrides,
    background: background === true,
    ...resume,
  };
}

/** `resume`: an earlier call of `agent` in this run that has ended, by its agent_id. */
function resumedConversation(
  id: JsonValue | undefined,
  agent: string,
  ctx: RunContext,
): { resume?: readonly Message[] } | { error: string } {
  if (id === undefined || id === null || id === '') return {};
  if (typeof id !== 'string') return { error: 'call_agent error: "resume" argument must be an agent_id' };
  const earlier = ctx.conversations.get(id);
  if (!earlier) {
    return {
      error: `call_agent error: no finished sub-agent with agent_id ${JSON.stringify(id)} to resume in this run`,
    };
  }
  if (earlier.agent !== agent) {
    return {
      error: `call_agent error: agent_id ${JSON.stringify(id)} is a call of "${earlier.agent}", not "${agent}"`,
    };
  }
  return { resume: earlier.messages };
}

function requiredStringArg(args: JsonObject, name: 'agent' | 'task'): string | { error: string } {
  const value = args[name];
  if (value === undefined || value === null || value === '') {
    return { error: `call_agent error: "${name}" argument is required` };
  }
  if (typeof value !== 'string') return { error: `call_agent error: "${name}" argument must be a string` };
  return value;
}

/**
 * Runs the named agent with the call's overrides; Go's text result (a TOML caller), the outcome as
 * text (a caller in another system's format), or as JSON.
 */
async function runSubAgent(
  options: ParentRun,
  args: ValidArgs,
  callNumber: number,
  history: readonly Message[],
  callId: string,
): Promise<ExecutedCall> {
  const step = `${CALL_AGENT_TOOL_NAME}#${callNumber}`;
  const prepare = async (parent: ParentRun): Promise<ChildRequest['prepared']> => {
    const loaded = await loadSpec(args.agent, parent.ctx, CALL_AGENT_TOOL_NAME);
    return 'spec' in loaded
      ? withOverrides(
          inCallerWorkdir(loaded.spec, parent),
          args.overrides,
          parent.ctx.env,
          CALL_AGENT_TOOL_NAME,
        )
      : loaded;
  };
  const request = (prepared: ChildRequest['prepared']): ChildRequest => ({
    agent: args.agent,
    step,
    prepared,
    task: args.task,
    ...(args.description !== undefined ? { description: args.description } : {}),
    message: subAgentUserMessage(args.task, args.context),
    inputs: args.inputs ?? {},
    overrides: args.overrides,
    history,
    callId,
    ...(args.resume ? { resume: args.resume } : {}),
  });
  const { background } = options;
  if (args.background && background) {
    const place = { step, agent: args.agent, task: args.task };
    const id = background.launchChild(options, place, async (from) =>
      startChild(from, { ...request(await prepare(from)), background: true }),
    );
    return {
      output: { content: JSON.stringify({ status: 'async_launched', agent_id: id }), isError: false },
    };
  }
  const prepared = await prepare(options);
  const result = await startChild(options, request(prepared));
  if (options.spec.subAgentsConfig.resultFormat === 'json')
    return { output: jsonResult(result), children: [result] };
  const output: ToolOutput =
    'error' in prepared
      ? toolFailure(prepared.error)
      : result.status === 'completed'
        ? { content: result.content, isError: false }
        : options.spec.format !== 'toml'
          ? // A caller from another system's format reads the outcome: status, counts, files, partial work.
            { content: outcomeText(result), isError: failedOutcome(result) }
          : result.stopped !== undefined
            ? { content: `${result.content}\n\n[stopped: ${result.stopped}]`.trimStart(), isError: false }
            : toolFailure(failure(args.agent, result));
  return { output, children: [result] };
}

/**
 * A child with no workdir of its own runs in its caller's when it comes from another system's
 * format (their sub-agents share the session's directory) or `--workdir` was given; a Go TOML
 * child otherwise keeps Go's directory, the process's.
 */
function inCallerWorkdir(spec: AgentSpec, parent: ParentRun): AgentSpec {
  if (spec.workdir !== undefined) return spec;
  if (spec.format === 'toml' && !parent.ctx.workdirGiven) return spec;
  return { ...spec, workdir: parent.workdir };
}

/**
 * `result_format = "json"` (and background results): the child's outcome as one object, status
 * first; an error unless it completed or its own limit stopped it with partial work.
 */
export function jsonResult(result: AgentRunResult): ToolOutput {
  const tree = treeUsage(result);
  const outcome = {
    status: result.status,
    result: result.output ?? result.content,
    agent_id: result.path,
    turns_used: result.turns,
    tool_calls: result.toolCalls,
    total_tokens: tree.inputTokens + tree.outputTokens,
    duration_seconds: Math.round(result.durationMs) / 1000,
    files_read: result.filesRead,
    files_modified: result.filesModified,
    // The parent model reads this: an error that echoed a key must not hand it over.
    ...(result.error !== undefined ? { error: maskSecrets(result.error) } : {}),
  };
  return { content: JSON.stringify(outcome), isError: failedOutcome(result) };
}

/** A failed sub-agent's tool result, as Go axe words it: `Error: sub-agent "<name>" failed - <description>. You may retry or proceed without this result.` */
function failure(agent: string, result: AgentRunResult): string {
  const description = failureReason(result).replace(/\.$/, '');
  return `Error: sub-agent "${agent}" failed - ${description}. You may retry or proceed without this result.`;
}
