import type { AgentSpec } from '../agent/spec.js';

/** The names in `tools = [...]`, once each and in order, minus `disallowed_tools`. */
export function listedToolNames(spec: Pick<AgentSpec, 'tools' | 'disallowedTools'>): string[] {
  const disallowed = new Set(spec.disallowedTools);
  return [...new Set(spec.tools.filter((name) => !disallowed.has(name)))];
}
