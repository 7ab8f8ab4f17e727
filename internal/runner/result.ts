import type { AxeError } from '../errors.js';
import { emptyUsage } from '../provider/types.js';
import type { ToolOutput } from '../tools/types.js';
import type { AgentStatus } from './events.js';
import type { AgentRunResult } from './types.js';

/** How an agent run ended: never a throw, the error (if any) typed for its exit code. */
export interface SettledRun {
  result: AgentRunResult;
  /** Why the run stopped early; `result.content` then holds the answer so far. */
  error?: AxeError;
}

/** The result of an agent that failed before its first provider call. */
export function failedBeforeStart(
  where: { agent: string; path: string; depth: number },
  status: AgentStatus,
  error: string,
  durationMs: number,
): AgentRunResult {
  return {
    ...where,
    status,
    content: '',
    model: '',
    stopReason: '',
    usage: emptyUsage(),
    retries: 0,
    turns: 0,
    durationMs,
    toolCalls: 0,
    toolCallDetails: [],
    children: [],
    error,
  };
}

const DETAIL_OUTPUT_BYTES = 1024;

/**
 * A tool output as the JSON envelope's `tool_call_details` carries it (Go axe's rule): at most
 * 1024 bytes of UTF-8, cut back to a character boundary, then `... (truncated)`.
 */
export function detailOutput(output: string): string {
  const bytes = Buffer.from(output, 'utf8');
  if (bytes.length <= DETAIL_OUTPUT_BYTES) return output;
  let end = DETAIL_OUTPUT_BYTES;
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return `${bytes.subarray(0, end).toString('utf8')}... (truncated)`;
}

/** A tool call that failed, as the model sees it. */
export function toolFailure(content: string): ToolOutput {
  return { content, isError: true };
}
