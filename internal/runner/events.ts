import type { JsonValue, Message, Usage } from '../provider/types.js';

/**
 * The one event stream of a run. `--verbose`, `--json` details, progress and (later) traces are
 * all renderers of it; nothing formats output inside the loop.
 *
 * `path` names the agent in the tree, e.g. `reviewer` or `reviewer/call_agent#2:tester`;
 * `depth` is 0 for the top-level agent. An event and what it holds (messages, tool input, usage)
 * are never changed once emitted: the run record turns events into lines later, when they pause.
 */
export type RunEvent = { path: string; agent: string; depth: number; time: number } & RunEventBody;

/**
 * How an agent run ended: its answer, `budget_exceeded` (the token budget), `timeout` (its own or
 * the run's deadline), `max_turns` (still calling tools at the turn limit), `cancelled` (Ctrl-C),
 * or `error` (anything else: a provider error, a refusal, a sub-agent file that does not load).
 */
export type AgentStatus = 'completed' | 'budget_exceeded' | 'timeout' | 'max_turns' | 'cancelled' | 'error';

export type RunEventBody =
  /** `callId`: the caller's tool call that started it (absent for the top-level agent). */
  | {
      type: 'agent.start';
      model: string;
      task: string;
      /** What the call is for in a few words (`call_agent`'s `description`). */
      description?: string;
      callId?: string;
    }
  /** An agent resolved and its tools built, just before its first model call (Go's verbose block). */
  | {
      type: 'agent.ready';
      model: string;
      workdir: string;
      /** The skill as configured (file or --skill), not resolved. */
      skill?: string;
      files: number;
      /** Tools offered to the model (built-in, MCP, call_agent). */
      tools: number;
      temperature?: number;
      maxTokens?: number;
      responseFormat?: string;
      memory?: { count: number; file: string };
      /** The system prompt as sent, and the names of the tools offered. */
      system: string;
      toolNames: string[];
      /** The provider's `host:port`, when it is called over the network (not from a cassette). */
      server?: string;
    }
  | {
      type: 'agent.end';
      status: AgentStatus;
      durationMs: number;
      usage: Usage;
      chars: number;
      /** The answer (or the answer so far), and the value `submit_result` handed over. */
      content: string;
      output?: JsonValue;
      turns: number;
      toolCalls: number;
      cost?: number;
      error?: string;
    }
  /** A sub-agent's `ask_parent` question (`from`: its name) and this agent's (or the person's) answer. */
  | { type: 'question'; from: string; question: string; answer: string }
  /** A message added to the agent's conversation: what the server received, then what it sent. */
  | { type: 'message'; message: Message }
  | { type: 'turn.start'; turn: number; messages: number; pendingToolCalls: number }
  /** `model`: the one the server says answered, when it says. */
  | { type: 'turn.end'; turn: number; stopReason: string; toolCalls: number; usage: Usage; model?: string }
  | { type: 'tool.start'; turn: number; callId: string; name: string; input: unknown }
  | {
      type: 'tool.end';
      turn: number;
      callId: string;
      name: string;
      output: string;
      isError: boolean;
      durationMs: number;
      /** Not run: an earlier call of its turn ended the agent (`submit_result` / `submit_error`). */
      skipped?: true;
    }
  | { type: 'text.delta'; text: string }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'mcp'; server: string; message: string }
  | { type: 'warning'; message: string }
  /** A sub-agent stopped by its timeout or turn limit gets one last turn of `seconds`… */
  | { type: 'grace.start'; reason: 'timeout' | 'max_turns'; seconds: number }
  /** …and answered in it (the run completes) or not (it keeps how it stopped). */
  | { type: 'grace.end'; answered: boolean }
  /** A plain line for the user on stderr (Go axe's `artifacts preserved: <dir>`). */
  | { type: 'notice'; message: string }
  /** A batch (`axe run --map`) starts one of its items: its key and its line in the input. */
  | { type: 'item.start'; key: string; line: number }
  /** A batch's item ended, with its status (an agent outcome, or `refused`). */
  | { type: 'item.end'; key: string; line: number; status: string; durationMs: number };

export type EmitEvent = (event: RunEvent) => void;

/**
 * What a reader of the stream that makes trace spans of it (telemetry/) gives back to the run: the
 * W3C `traceparent` of an agent's span, or of one of its tool calls' spans, for the processes the
 * agent starts (run_command, MCP stdio servers). Undefined when that span is not (or no longer) open.
 */
export interface TraceLinks {
  forAgent(path: string): string | undefined;
  forCall(path: string, callId: string): string | undefined;
  /** Only with config.toml's `[telemetry] propagate`: the model call's span, for its HTTP request. */
  forChat?(path: string): string | undefined;
}
