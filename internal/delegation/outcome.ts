import { failureReason } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';

/**
 * How a delegated agent's outcome reads in its caller's tool result (`spawn_agents`,
 * `delegate_task`, background results): the status first, then — when it did not complete — what
 * it got done: its answer so far, its counts and the files it read and changed.
 */

/**
 * A child its own limit stopped (`budget_exceeded`, `max_turns`) after doing something: a normal
 * outcome with partial work, not an error, whatever its status says.
 */
export function stoppedWithWork(result: AgentRunResult): boolean {
  if (result.status !== 'budget_exceeded' && result.status !== 'max_turns') return false;
  return result.content !== '' || result.output !== undefined || result.toolCalls > 0;
}

/** Whether the caller should read this outcome as a failure (`is_error`). */
export function failedOutcome(result: AgentRunResult): boolean {
  return result.status !== 'completed' && !stoppedWithWork(result);
}

/** A child's answer (so far, when it did not complete), as text ('' when it has none). */
function partialWork(result: AgentRunResult): string {
  if (result.output !== undefined) return JSON.stringify(result.output);
  return result.content;
}

/**
 * An outcome as lines of text: `Status: completed` and the answer; else `Status: <status>
 * (<why>)`, the counts, the files, and the partial work under its own heading.
 */
export function outcomeText(result: AgentRunResult): string {
  if (result.status === 'completed') {
    return `Status: completed\n\n${partialWork(result)}`;
  }
  const lines = [
    `Status: ${result.status} (${failureReason(result)})`,
    `Turns: ${result.turns}, tool calls: ${result.toolCalls}`,
  ];
  if (result.filesRead.length > 0) lines.push(`Files read: ${result.filesRead.join(', ')}`);
  if (result.filesModified.length > 0) lines.push(`Files modified: ${result.filesModified.join(', ')}`);
  const partial = partialWork(result);
  return partial === '' ? lines.join('\n') : `${lines.join('\n')}\n\nPartial work:\n${partial}`;
}

/** The same outcome as JSON fields beside the status (`spawn_agents`' entries). */
export function outcomeFields(result: AgentRunResult): Record<string, string | number | string[]> {
  if (result.status === 'completed') return {};
  const partial = partialWork(result);
  return {
    ...(partial !== '' ? { partial_result: partial } : {}),
    turns: result.turns,
    tool_calls: result.toolCalls,
    files_read: result.filesRead,
    files_modified: result.filesModified,
  };
}
