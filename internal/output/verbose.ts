import type { RunEvent } from '../runner/events.js';
import type { RunOutcome } from '../runner/types.js';
import { summarizeToolCall } from '../tools/summary.js';
import { CALL_AGENT_TOOL_NAME } from '../tools/types.js';

const TASK_PREVIEW_CHARS = 80;

/**
 * Renders the event stream as the `--verbose` lines of Go axe (spec §3.7, §3.8): `[turn N]` lines
 * for the top-level conversation, `[sub-agent]` lines for every call_agent, `[tool]`, `[mcp]` and
 * `[retry]` lines. Returns the lines an event produces (none for most).
 */
export function createVerboseFormatter(): (event: RunEvent) => string[] {
  const toolInputs = new Map<string, unknown>();
  return (event) => {
    switch (event.type) {
      case 'turn.start':
        if (event.depth !== 0) return [];
        return [
          `[turn ${event.turn}] Sending request (${event.messages} messages, ${event.pendingToolCalls} tool calls pending)`,
        ];
      case 'turn.end':
        if (event.depth !== 0) return [];
        return [
          `[turn ${event.turn}] Received response: ${event.stopReason} (${event.toolCalls} tool calls)`,
        ];
      case 'agent.start':
        if (event.depth === 0) return [];
        return [
          `[sub-agent] Calling "${event.agent}" (depth ${event.depth}) with task: ${preview(event.task, TASK_PREVIEW_CHARS)}`,
        ];
      case 'agent.end':
        if (event.depth === 0) return [];
        if (event.status === 'ok') {
          return [
            `[sub-agent] "${event.agent}" completed in ${event.durationMs}ms (${event.chars} chars returned)`,
          ];
        }
        return [`[sub-agent] "${event.agent}" failed: ${event.error ?? event.status}`];
      case 'tool.start':
        if (event.name !== CALL_AGENT_TOOL_NAME)
          toolInputs.set(toolKey(event.path, event.callId), event.input);
        return [];
      case 'tool.end': {
        if (event.name === CALL_AGENT_TOOL_NAME) return [];
        const key = toolKey(event.path, event.callId);
        const input = toolInputs.get(key);
        toolInputs.delete(key);
        const status = event.isError ? 'error' : 'success';
        const summary = summarizeToolCall(event.name, input, {
          content: event.output,
          isError: event.isError,
        });
        return [`[tool] ${event.name}: ${summary} (${status})`];
      }
      case 'retry':
        return [`[retry] Attempt ${event.attempt} after ${event.reason}, waiting ${event.delayMs}ms`];
      case 'mcp':
        return [`[mcp] ${event.server}: ${event.message}`];
      default:
        return [];
    }
  };
}

/** The closing lines of `--verbose`: duration, cumulative tokens, stop reason, tree totals. */
export function verboseSummary(outcome: RunOutcome): string[] {
  const { result, budget } = outcome;
  const tokens = `${result.usage.inputTokens} input, ${result.usage.outputTokens} output`;
  const qualifier =
    budget.limit !== undefined
      ? ` (cumulative, budget: ${budget.used}/${budget.limit})`
      : result.turns > 1
        ? ' (cumulative)'
        : '';
  const lines = [`Duration: ${result.durationMs}ms`, `Tokens:   ${tokens}${qualifier}`];
  if (result.stopReason !== '') lines.push(`Stop:     ${result.stopReason}`);
  const calls = countSubAgentCalls(result.children);
  if (calls > 0) lines.push(`Agents:   ${calls} sub-agent call(s), ${budget.used} tokens across the tree`);
  return lines;
}

function countSubAgentCalls(children: RunOutcome['result']['children']): number {
  return children.reduce((sum, child) => sum + 1 + countSubAgentCalls(child.children), 0);
}

function toolKey(path: string, callId: string): string {
  return `${path}\u0000${callId}`;
}

/** Go axe: the first 80 characters, `...` when cut. Newlines are flattened to keep one line. */
export function preview(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  const chars = Array.from(flat);
  return chars.length > max ? `${chars.slice(0, max).join('')}...` : flat;
}
