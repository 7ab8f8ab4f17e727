import { posix } from 'node:path';
import type { AxeError } from '../errors.js';
import { addUsage, emptyUsage, type Message, type Usage } from '../provider/types.js';
import { maskSecrets } from '../secrets.js';
import { utf8Prefix } from '../text.js';
import type { ToolOutput } from '../tools/types.js';
import type { AgentStatus, RunEventBody } from './events.js';
import type { AgentRunResult, ToolCallDetail } from './types.js';

/** How an agent run ended: never a throw, the error (if any) typed for its exit code. */
export interface SettledRun {
  result: AgentRunResult;
  /** Why the run stopped early; `result.content` then holds the answer so far. */
  error?: AxeError;
  /** Its conversation as it stands (from the first request's messages on). */
  conversation?: readonly Message[];
}

/** The usage of an agent and every agent it called. */
export function treeUsage(result: AgentRunResult): Usage {
  return result.children.reduce((sum, child) => addUsage(sum, treeUsage(child)), result.usage);
}

/** The cost of an agent and every agent it called, when any of them reported one. */
export function treeCost(result: AgentRunResult): number | undefined {
  return sumCosts([result.cost, ...result.children.map(treeCost)]);
}

/** The sum of the costs reported; undefined when none was. */
export function sumCosts(costs: readonly (number | undefined)[]): number | undefined {
  const reported = costs.filter((c): c is number => c !== undefined);
  return reported.length === 0 ? undefined : reported.reduce((a, b) => a + b, 0);
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
    filesRead: [],
    filesModified: [],
    children: [],
    error,
  };
}

const READS = new Set(['read_file']);
const WRITES = new Set(['write_file', 'edit_file']);

/**
 * The files an agent's built-in file tools read and changed, each once, in call order: the path
 * as the model gave it (normalised), under `$AXE_ARTIFACT_DIR/` for an artifact. Failed calls
 * touched nothing.
 */
export function filesTouched(details: readonly ToolCallDetail[]): {
  filesRead: string[];
  filesModified: string[];
} {
  const read = new Set<string>();
  const modified = new Set<string>();
  for (const detail of details) {
    const input = detail.input as { path?: unknown; artifact?: unknown } | null;
    if (detail.isError || typeof input?.path !== 'string') continue;
    const artifact = input.artifact === true || input.artifact === 'true';
    const file = artifact ? posix.join('$AXE_ARTIFACT_DIR', input.path) : posix.normalize(input.path);
    if (READS.has(detail.name)) read.add(file);
    if (WRITES.has(detail.name)) modified.add(file);
  }
  return { filesRead: [...read], filesModified: [...modified] };
}

const DETAIL_OUTPUT_BYTES = 1024;

/**
 * A tool output as the JSON envelope's `tool_call_details` carries it (Go axe's rule): at most
 * 1024 bytes of UTF-8, cut back to a character boundary, then `... (truncated)`.
 */
export function detailOutput(output: string): string {
  if (Buffer.byteLength(output, 'utf8') <= DETAIL_OUTPUT_BYTES) return output;
  // Masked before it is cut: a key the cut went through would be left in part, past masking.
  const masked = maskSecrets(output);
  const bytes = Buffer.from(masked, 'utf8');
  if (bytes.length <= DETAIL_OUTPUT_BYTES) return masked;
  return `${utf8Prefix(bytes, DETAIL_OUTPUT_BYTES)}... (truncated)`;
}

/** A tool call that failed, as the model sees it. */
export function toolFailure(content: string): ToolOutput {
  return { content, isError: true };
}

/**
 * Why a child did not complete, as its caller's model reads it: its error (a stopped child's is
 * the `budget exceeded — …` detail), else its status; a key a server echoed is masked.
 */
export function failureReason(result: AgentRunResult): string {
  return maskSecrets(result.error ?? result.status);
}

/** What `agent.end` tells of an agent's outcome. */
export function outcomeOf(result: AgentRunResult) {
  return {
    status: result.status,
    durationMs: result.durationMs,
    usage: result.usage,
    chars: result.content.length,
    content: result.content,
    ...(result.output !== undefined ? { output: result.output } : {}),
    turns: result.turns,
    toolCalls: result.toolCalls,
    ...(result.cost !== undefined ? { cost: result.cost } : {}),
    ...(result.error !== undefined ? { error: result.error } : {}),
  } satisfies Omit<Extract<RunEventBody, { type: 'agent.end' }>, 'type'>;
}
