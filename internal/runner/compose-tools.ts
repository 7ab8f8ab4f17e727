import { normalize } from 'node:path';
import type { AgentSpec } from '../agent/spec.js';
import type { OpenArtifactDir } from '../artifacts/artifacts.js';
import { gatedHandler, type ParentApprover, parentApprover } from '../delegation/approval.js';
import { ASK_PARENT_TOOL_SPEC, askParentHandler, parentAnswerer } from '../delegation/ask-parent.js';
import { BackgroundChildren, TASK_OUTPUT_TOOL_SPEC, taskOutputHandler } from '../delegation/background.js';
import {
  beyondGo,
  callAgentHandler,
  callAgentToolSpec,
  jsonResult,
  loadSubAgents,
} from '../delegation/call-agent.js';
import type { ParentRun, RunSettled } from '../delegation/child.js';
import { childConnections } from '../delegation/child-connections.js';
import { delegateTaskHandler, delegateTaskToolSpec } from '../delegation/delegate-task.js';
import { spawnAgentsHandler, spawnAgentsToolSpec } from '../delegation/spawn-agents.js';
import { FREE_TEXT_OUTPUT, SUBMIT_TOOLS, submitHandlers, submitToolSpecs } from '../delegation/submit.js';
import { ConfigError } from '../errors.js';
import type { ChildConnections, ToolSpec } from '../provider/types.js';
import type { ToolArtifacts, ToolContext, Toolset } from '../tools/types.js';
import {
  ASK_PARENT_TOOL_NAME,
  CALL_AGENT_TOOL_NAME,
  DELEGATE_TASK_TOOL_NAME,
  SPAWN_AGENTS_TOOL_NAME,
  TASK_OUTPUT_TOOL_NAME,
} from '../tools/types.js';
import { effectiveAllowedHosts, emitEvent, type RunContext } from './context.js';
import type { LoopSetup, ToolHandler } from './loop.js';
import type { ResolvedAgentRun } from './resolve.js';
import type { TerminalTools } from './terminal.js';

/**
 * Composes an agent's tool set: its built-in and MCP tools, `submit_result` / `submit_error`, and
 * the delegation tools that start or talk to other agents. The one module of the runner that
 * reaches into internal/delegation/: the loop itself only runs tool handlers (and knows the
 * terminal tools and questions through the runner's own interfaces).
 */

// The parts of a run that only delegation has, which run-agent reaches through here: collecting
// background children at the agent's end, a forked sub-agent's first messages, the grace turn.
export { collectBackground } from '../delegation/background.js';
export { forkedStart } from '../delegation/fork.js';
export { graceTurn } from '../delegation/grace.js';

/** What an agent's run holds of its delegation from its start to its end. */
export interface AgentDelegation {
  /** Its background children, when `background = true` (and it may still start children). */
  background?: BackgroundChildren;
  /** How it answers its children's `ask_parent`, when `ask_parent = true`. */
  ask: ParentRun['ask'];
  /** How it answers its children's requests for tools above their tier. */
  approve: ParentApprover;
  /** How a child runs: the one code path of every agent, passed in. */
  runSettled: RunSettled;
}

/** The agent's delegation, opened before its tools: `setup` is its loop's, once in place. */
export function openDelegation(
  spec: AgentSpec,
  ctx: RunContext,
  resolved: ResolvedAgentRun,
  setup: () => LoopSetup | undefined,
  runSettled: RunSettled,
): AgentDelegation {
  const background =
    spec.subAgentsConfig.background && !resolved.atMaxDepth ? new BackgroundChildren(ctx.signal) : undefined;
  return {
    ...(background ? { background } : {}),
    ask: parentAnswerer(spec, ctx, setup),
    approve: parentApprover(spec, ctx, setup),
    runSettled,
  };
}

/** An agent's tool set, as its loop runs it. */
export interface AgentTools {
  specs: readonly ToolSpec[];
  handlers: ReadonlyMap<string, ToolHandler>;
  mutating: ReadonlySet<string>;
  /** The tools that end the agent when called. */
  terminal: TerminalTools;
  toolset?: Toolset;
  /** Connections to open for its children, when a child it may start would call its provider. */
  connections?: ChildConnections;
}

/**
 * The tools of an agent offered none: shared by every such agent (nothing of its own kept for the
 * run), never changed.
 */
const NO_TOOLS: AgentTools = Object.freeze({
  specs: [],
  handlers: new Map<string, ToolHandler>(),
  mutating: new Set<string>(),
  terminal: SUBMIT_TOOLS,
});

/**
 * The agent's tools: none at the max depth; else its built-in and MCP tools (each execution under
 * the run-wide limiter) and `call_agent` when it has sub-agents — narrowed to the call's `tools`
 * and, read-only, to the tools that change nothing. `submit_result` / `submit_error` whenever the
 * agent has `[output]` or is offered them (a worker, a Codex definition), at any depth.
 */
export async function composeTools(
  spec: AgentSpec,
  ctx: RunContext,
  resolved: ResolvedAgentRun,
  artifactDir: OpenArtifactDir | undefined,
  delegation: AgentDelegation,
): Promise<AgentTools> {
  const specs: ToolSpec[] = [];
  const handlers = new Map<string, ToolHandler>();
  const mutating = new Set<string>();
  let toolset: Toolset | undefined;
  const only = ctx.onlyTools ? new Set(ctx.onlyTools) : undefined;
  const readOnly = ctx.readOnly || spec.readOnly;
  const had = new Set<string>();
  const offers = (name: string, changesNothing: boolean): boolean => {
    had.add(name);
    return (!only || only.has(name)) && (!readOnly || changesNothing);
  };
  // Read the sub-agents' files while MCP servers connect: call_agent describes their inputs.
  const subAgents = resolved.callsAgents ? loadSubAgents(spec.subAgents, ctx) : undefined;
  if (!resolved.atMaxDepth && (spec.tools.length > 0 || spec.mcpServers.length > 0)) {
    const context: ToolContext = {
      workdir: resolved.workdir,
      signal: ctx.signal,
      allowedHosts: effectiveAllowedHosts(spec, ctx),
      env: ctx.env,
      ...(artifactDir ? { artifacts: toolArtifacts(spec, ctx, artifactDir.dir) } : {}),
      ...traceparentOf(ctx.trace?.forAgent(ctx.path)),
    };
    const { createToolset } = await import('../tools/index.js');
    toolset = await createToolset({ spec, context, report: (event) => emitEvent(ctx, spec.name, event) });
    // A tier or `[permissions]` puts a gate before each tool (an approval waits outside the limiter).
    const gated = spec.tier !== undefined || spec.permissions.allow.length + spec.permissions.deny.length > 0;
    for (const tool of toolset.tools) {
      if (!offers(tool.spec.name, tool.readOnly === true)) continue;
      if (tool.readOnly !== true) mutating.add(tool.spec.name);
      specs.push(tool.spec);
      const run: ToolHandler = async (call) => ({
        output: await ctx.limiter.run(
          () => tool.execute(call.arguments, callContext(context, ctx.trace?.forCall(ctx.path, call.id))),
          ctx.signal,
        ),
      });
      handlers.set(
        tool.spec.name,
        gated ? gatedHandler(spec, ctx, tool.spec.name, tool.readOnly === true, run) : run,
      );
    }
  }
  const output = spec.output ?? (spec.offersSubmit ? FREE_TEXT_OUTPUT : undefined);
  if (output) {
    specs.push(...submitToolSpecs(output));
    for (const [name, handler] of await submitHandlers(output)) handlers.set(name, handler);
  }
  if (ctx.askParent && !resolved.atMaxDepth && offers(ASK_PARENT_TOOL_NAME, true)) {
    specs.push(ASK_PARENT_TOOL_SPEC);
    handlers.set(ASK_PARENT_TOOL_NAME, askParentHandler(ctx.askParent, ctx));
  }
  const { background } = delegation;
  // A read-only agent still delegates: the agents it calls are read-only too.
  const parent: ParentRun = {
    spec,
    ctx,
    model: resolved.model,
    workdir: resolved.workdir,
    runSettled: delegation.runSettled,
    ...(background ? { background } : {}),
    ...(delegation.ask ? { ask: delegation.ask } : {}),
    approve: delegation.approve,
  };
  const callable = (await subAgents) ?? [];
  if (resolved.callsAgents && offers(CALL_AGENT_TOOL_NAME, true)) {
    specs.push(callAgentToolSpec(spec.subAgents, spec.subAgentsConfig, callable, beyondGo(spec)));
    handlers.set(CALL_AGENT_TOOL_NAME, callAgentHandler(parent));
  }
  if (resolved.spawns && offers(SPAWN_AGENTS_TOOL_NAME, true)) {
    specs.push(spawnAgentsToolSpec(spec.subAgentsConfig.maxSpawn, background !== undefined));
    handlers.set(SPAWN_AGENTS_TOOL_NAME, spawnAgentsHandler(parent));
  }
  if (background && (resolved.callsAgents || resolved.spawns) && offers(TASK_OUTPUT_TOOL_NAME, true)) {
    specs.push(TASK_OUTPUT_TOOL_SPEC);
    handlers.set(TASK_OUTPUT_TOOL_NAME, taskOutputHandler(background, ctx.signal, jsonResult));
  }
  if (resolved.delegates && offers(DELEGATE_TASK_TOOL_NAME, true)) {
    specs.push(delegateTaskToolSpec(spec.subAgents, spec.subAgentsConfig.maxSubtasks));
    handlers.set(DELEGATE_TASK_TOOL_NAME, delegateTaskHandler(parent));
  }
  const unknown = [...(only ?? [])].filter((name) => !had.has(name));
  if (unknown.length > 0) {
    await toolset?.close();
    const has = had.size > 0 ? [...had].join(', ') : 'none';
    throw new ConfigError(
      `"tools" argument: ${spec.name} has no tool ${unknown.map((n) => `"${n}"`).join(', ')} (its tools: ${has})`,
    );
  }
  // Every child of a fan-out that only answers: what it keeps for its run is the shared empty set.
  if (specs.length === 0 && !toolset) return NO_TOOLS;
  const connections = childConnections(spec, resolved.model.provider, handlers, callable, {
    maxParallel: ctx.limiter.size,
    subagentModel: Boolean(ctx.env.AXE_SUBAGENT_MODEL),
  });
  return {
    specs,
    handlers,
    mutating,
    terminal: SUBMIT_TOOLS,
    ...(connections ? { connections } : {}),
    ...(toolset ? { toolset } : {}),
  };
}

function traceparentOf(traceparent: string | undefined): { traceparent?: string } {
  return traceparent === undefined ? {} : { traceparent };
}

/** A traced call's tool context names the call's span (else the agent's context as it is). */
function callContext(context: ToolContext, traceparent: string | undefined): ToolContext {
  return traceparent === undefined ? context : { ...context, traceparent };
}

/** The file tools' view of the agent's artifact directory; writes into the run's are listed. */
function toolArtifacts(spec: AgentSpec, ctx: RunContext, dir: string): ToolArtifacts {
  return {
    dir,
    defaultWrite: spec.artifacts.defaultWrite,
    record: (path, size) => {
      if (ctx.artifacts.dir === dir) ctx.artifacts.record({ path: normalize(path), agent: spec.name, size });
    },
  };
}
