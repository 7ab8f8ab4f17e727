import type { ModelRef } from '../agent/spec.js';
import type { JsonValue } from '../provider/types.js';
import { childPath } from '../runner/agent-path.js';
import { deadlineScope, type RunContext } from '../runner/context.js';
import type { LimitScope } from '../runner/limits.js';
import type { AskParent } from '../runner/questions.js';
import type { PriorConversation } from '../runner/types.js';

/**
 * The number of the last call of `tool` (`call_agent`, `spawn_agents`, `delegate_task`) this agent's
 * conversation already holds: 0 but for a top-level agent picking up a recorded run.
 */
export function callsBefore(ctx: RunContext, tool: string): number {
  const { prior } = ctx;
  return prior === undefined || prior.kind === 'fork' ? 0 : (prior.earlier?.numbers[tool] ?? 0);
}

export interface ChildContext {
  ctx: RunContext;
  /** Clears the child's timer and listener; call when the sub-agent is done. */
  dispose(): void;
}

/**
 * A sub-agent's context: depth + 1, its path, the parent's model to inherit, and — when
 * `timeoutSeconds > 0` — its own deadline, aborting with a RunDeadline; else the parent's.
 */
export function childContext(
  parent: RunContext,
  options: {
    agent: string;
    /** This child's step in the tree's paths: `call_agent#2`, `spawn_agents#1.3`. */
    step: string;
    timeoutSeconds: number;
    parentModel: ModelRef;
    parentAllowedHosts: readonly string[];
    limits: LimitScope;
    inputs: Readonly<Record<string, JsonValue>>;
    readOnly: boolean;
    onlyTools?: readonly string[];
    prior?: PriorConversation;
    askParent?: AskParent;
  },
): ChildContext {
  // Its own deadline when it has a timeout, unless the parent's comes first; else the parent's.
  const scope = options.timeoutSeconds > 0 ? deadlineScope(parent.signal, options.timeoutSeconds) : undefined;
  const own =
    scope !== undefined && (parent.deadline === undefined || (scope.deadline ?? Infinity) < parent.deadline);
  // Every field named, in one order (checked below): all children then share one hidden class. A
  // spread of the parent gave each child its own past the first few, so every read of a context
  // in a wide fan-out went megamorphic.
  const ctx = {
    path: childPath(parent.path, options.step, options.agent),
    depth: parent.depth + 1,
    maxDepth: parent.maxDepth,
    signal: scope ? scope.controller.signal : parent.signal,
    deadline: own ? scope.deadline : parent.deadline,
    deadlineSeconds: own ? options.timeoutSeconds : parent.deadlineSeconds,
    budget: parent.budget,
    limits: options.limits,
    limiter: parent.limiter,
    emit: parent.emit,
    providers: parent.providers,
    loadAgent: parent.loadAgent,
    resolveAgent: parent.resolveAgent,
    env: parent.env,
    configDir: parent.configDir,
    promptCachingDefault: parent.promptCachingDefault,
    warmup: parent.childWarmup,
    // Its own, when its file asks for it, is made as it starts (run-agent.ts).
    childWarmup: undefined,
    stream: false,
    inheritedModel: options.parentModel,
    inheritedAllowedHosts: options.parentAllowedHosts,
    inputs: options.inputs,
    readOnly: options.readOnly,
    onlyTools: options.onlyTools,
    prior: options.prior,
    askPerson: parent.askPerson,
    askParent: options.askParent,
    caller: { signal: parent.signal, deadline: parent.deadline, deadlineSeconds: parent.deadlineSeconds },
    workdirGiven: parent.workdirGiven,
    overrides: {},
    artifacts: parent.artifacts,
    keepArtifacts: parent.keepArtifacts,
    conversations: parent.conversations,
    reuse: parent.reuse,
  } satisfies Record<keyof RunContext, unknown> & RunContext;
  return { ctx, dispose: scope ? scope.dispose : () => {} };
}
