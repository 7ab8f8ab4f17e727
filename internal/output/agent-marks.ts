import type { AgentStatus } from '../runner/events.js';

/** How an agent's outcome is shown on a terminal: its mark and the ANSI colour of the mark. */
export const STATUS_MARKS: Readonly<Record<AgentStatus, { glyph: string; color: string }>> = {
  completed: { glyph: '✓', color: '32' },
  error: { glyph: '✗', color: '31' },
  cancelled: { glyph: '✗', color: '31' },
  timeout: { glyph: '⏱', color: '33' },
  budget_exceeded: { glyph: '$', color: '33' },
  max_turns: { glyph: '↻', color: '33' },
};

/** An agent's mark in text without colour: its outcome's glyph, `…` while it runs. */
export function statusGlyph(status: AgentStatus | 'running'): string {
  return status === 'running' ? '…' : STATUS_MARKS[status].glyph;
}

/** `call_agent ×3, read_file`: the tools an agent is in, each once with its count. */
export function toolsInFlight(names: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name)).join(', ');
}
