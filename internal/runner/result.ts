import { emptyUsage } from '../provider/types.js';
import type { AgentStatus } from './events.js';
import type { AgentRunResult } from './types.js';

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
