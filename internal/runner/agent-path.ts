/*
 * An agent's path names its place in the tree (and is its `agent_id`): the top-level agent's name,
 * then `/<step>:<agent>` per sub-agent call, e.g. `lead/call_agent#2:worker`. A leaf module:
 * renderers and the run record read paths without loading the runner.
 */

/** A child's place in the tree: `lead/call_agent#2:worker`; also its `agent_id`. */
export function childPath(parentPath: string, step: string, agent: string): string {
  return `${parentPath}/${step}:${agent}`;
}

/** `childPath` read back: `lead/call_agent#2:worker` → its caller's path, step and agent name. */
export function splitPath(path: string): { parent?: string; step?: string; agent: string } {
  const cut = path.lastIndexOf('/');
  if (cut < 0) return { agent: path };
  const last = path.slice(cut + 1);
  const colon = last.indexOf(':');
  return { parent: path.slice(0, cut), step: last.slice(0, colon), agent: last.slice(colon + 1) };
}

/**
 * `--resume`: which child of the run picked up a completed child's result stands for — the same
 * caller, tool call, place in that call (a spawn_agents task's index) and agent.
 */
export function reuseKey(parentPath: string, callId: string, step: string, agent: string): string {
  return JSON.stringify([parentPath, callId, step.replace(/^[^#]*#\d+/, ''), agent]);
}
