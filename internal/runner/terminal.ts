import { RuntimeError } from '../errors.js';
import type { JsonValue } from '../provider/types.js';

/**
 * The tools that end an agent when called (`submit_result` / `submit_error` of an agent with
 * `[output]`). The loop knows them only by this description; the tools themselves are built with
 * the rest of the agent's tool set.
 */
export interface TerminalTools {
  /**
   * Their names. A call of one is never refused for want of tool calls, and a turn that calls one
   * runs all its calls whatever the limits: the agent ends with that turn.
   */
  readonly names: ReadonlySet<string>;
  /** The user turn that asks an agent that must end through one, and answered in plain text, to call it. */
  readonly reminder: string;
}

/** What a terminal call handed over; the loop ends the agent with the first one of a turn. */
export type Submission = { value: JsonValue } | { error: string };

/** The agent said it cannot do the task (`submit_error`): status error, exit 1 at the top level. */
export class SubmittedError extends RuntimeError {}

/** How an agent's answer reads as text (its tool result, `content`): a string as it is, else JSON. */
export function outputText(value: JsonValue): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
