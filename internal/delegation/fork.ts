import type { Message } from '../provider/types.js';
import { appendText, portableHistory, resolvedHistory, withoutToolBlocks } from '../runner/history.js';

/** What a forked sub-agent (`fork_context`) reads between its caller's conversation and its task. */
export const FORK_BOUNDARY = `### FORKING CONVERSATION CONTEXT ###
### ENTERING SUB-AGENT ROUTINE ###
Entered sub-agent context

PLEASE NOTE:
- The messages above this point are from the main thread prior to sub-agent execution.
- Context messages may include tool_use blocks for tools not available in sub-agent context.
- Only complete the specific sub-agent task you have been assigned below.`;

/**
 * A forked sub-agent's first messages: its caller's conversation with no call left
 * unanswered — the turn calling it cut back to its text —, without reasoning and signatures when
 * the caller spoke to another provider, told as text when the sub-agent has no tools; then the
 * boundary and the task, as one user turn.
 */
export function forkedStart(
  conversation: readonly Message[],
  task: string,
  options: { sameProvider: boolean; hasTools: boolean },
): Message[] {
  const resolved = resolvedHistory(conversation);
  const portable = options.sameProvider ? resolved : portableHistory(resolved);
  const messages = options.hasTools ? portable : withoutToolBlocks(portable);
  appendText(messages, 'user', `${FORK_BOUNDARY}\n\n${task}`);
  return messages;
}
