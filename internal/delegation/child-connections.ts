import type { AgentSpec } from '../agent/spec.js';
import { CHILDREN_PER_TURN } from '../fanout/start-pacer.js';
import type { ChildConnections, ToolCall } from '../provider/types.js';
import { CALL_AGENT_TOOL_NAME, DELEGATE_TASK_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME } from '../tools/types.js';

/**
 * Most connections opened ahead: enough for Go axe's habit of starting a turn's every call at
 * once, few enough that an agent calling one sub-agent costs no more than some idle sockets until
 * the run ends. A wider turn opens more once its answer is read (`forCalls`).
 */
const AHEAD = 32;
/**
 * Most connections opened once a turn's answer is read: those of the children that start in the
 * next two turns of the event loop (start-pacer.ts). A later child opens its own as it starts:
 * hundreds opened at once would hold the first children's requests behind a burst of connects
 * (and handshakes), which cost a 512-way fan-out ~0.03x of its critical path on loopback.
 */
const AFTER_ANSWER = 2 * CHILDREN_PER_TURN;

/**
 * The connections of an agent whose offered tools are `tools` (its handlers, by name) on
 * `provider`; undefined when no child it may start would call that provider. `callable`: its
 * sub-agents' files; `maxParallel`: the run-wide limit of children at once.
 */
export function childConnections(
  spec: AgentSpec,
  provider: string,
  tools: { has(name: string): boolean },
  callable: readonly AgentSpec[],
  { maxParallel, subagentModel }: { maxParallel: number; subagentModel: boolean },
): ChildConnections | undefined {
  // Copies of the agent itself, on its own model.
  const startsWorkers = tools.has(SPAWN_AGENTS_TOOL_NAME) || tools.has(DELEGATE_TASK_TOOL_NAME);
  // Most agents delegate nothing: every child of a fan-out asks this, and is done here.
  if (!startsWorkers && !tools.has(CALL_AGENT_TOOL_NAME)) return undefined;
  // Workers run on the agent's own model; a named sub-agent on its own, the caller's (`inherit`),
  // or whatever AXE_SUBAGENT_MODEL or a call's `model` (`overrides = true`) says.
  const anyModel = spec.subAgentsConfig.overrides || subagentModel;
  const sharing = new Set(
    callable
      .filter((child) => anyModel || child.model === undefined || child.model.provider === provider)
      .map((child) => child.name),
  );
  if (!startsWorkers && sharing.size === 0) return undefined;
  const started = (call: ToolCall): number => {
    const args = call.arguments;
    if (call.name === CALL_AGENT_TOOL_NAME) return sharing.has(String(args.agent)) ? 1 : 0;
    if (call.name === SPAWN_AGENTS_TOOL_NAME) return Array.isArray(args.tasks) ? args.tasks.length : 0;
    if (call.name === DELEGATE_TASK_TOOL_NAME && Array.isArray(args.subtasks)) {
      // The sub-tasks that wait for none start at once.
      return args.subtasks.filter((task) => !hasPrerequisites(task)).length;
    }
    return 0;
  };
  return {
    ahead: Math.min(maxParallel, AHEAD),
    forCalls: (turnCalls) => {
      if (turnCalls.length === 0) return 0;
      let count = 0;
      for (const call of turnCalls) if (tools.has(call.name)) count += started(call);
      return Math.min(maxParallel, count, AFTER_ANSWER);
    },
  };
}

function hasPrerequisites(task: unknown): boolean {
  if (typeof task !== 'object' || task === null) return false;
  const dependsOn = (task as { depends_on?: unknown }).depends_on;
  return Array.isArray(dependsOn) && dependsOn.length > 0;
}
