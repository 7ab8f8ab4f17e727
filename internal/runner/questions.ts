import type { JsonObject } from '../provider/types.js';

/**
 * How a question pauses an agent: one of its tool calls waits for an answer from above. The runner
 * owns these shapes; the delegation tools implement them (`ask_parent`, `--interactive`).
 */

/**
 * `ask_parent` (`[sub_agents_config] ask_parent = true` in the caller): a sub-agent asks instead
 * of guessing. The question is answered by one side request to the caller's model — its system
 * prompt and its conversation up to the call, no tools —; the caller's own loop is not disturbed.
 */
export interface AskParent {
  ask(question: string, signal: AbortSignal, deadline: number | undefined): Promise<string>;
  maxQuestions: number;
}

/** Puts a sub-agent's question to the person at the terminal (`--interactive`). */
export type AskPerson = (agent: string, question: string, signal: AbortSignal) => Promise<string>;

/** A tool call above an agent's tier, put to whoever may allow it. */
export interface ApprovalRequest {
  /** The agent asking. */
  agent: string;
  tool: string;
  /** The call's arguments, as the model gave them. */
  args: JsonObject;
  /** Why it needs approval: `run_command needs the "shell" tier, above this agent's "read"`. */
  why: string;
}

export interface Approval {
  allowed: boolean;
  /** The answer's reason, as given. */
  reason: string;
  /** Who answered: `its parent "lead"`, `the person`. */
  by: string;
}

/** How a sub-agent's requests for tools above its tier reach its caller (this run only). */
export type Approve = (
  request: ApprovalRequest,
  signal: AbortSignal,
  deadline: number | undefined,
) => Promise<Approval>;
