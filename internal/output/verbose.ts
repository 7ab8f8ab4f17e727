import { BudgetError } from '../errors.js';
import { type Pricer, treeDollars } from '../prices/index.js';
import type { RunEvent } from '../runner/events.js';
import type { RunOutcome } from '../runner/types.js';
import { summarizeToolCall } from '../tools/summary.js';
import { CALL_AGENT_TOOL_NAME, DELEGATE_TASK_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME } from '../tools/types.js';
import { cacheUsageText } from './cache-usage.js';
import { costText } from './dollars.js';

/** Their calls show as the sub-agents' own lines. */
const DELEGATION_TOOLS = new Set([CALL_AGENT_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME, DELEGATE_TASK_TOOL_NAME]);

const TASK_PREVIEW_CHARS = 80;

/** What the CLI knows about a run that Go's verbose block shows. */
export interface VerboseRunInfo {
  /** Where the user message came from. */
  promptSource: 'flag' | 'stdin' | 'default';
  timeoutSeconds: number;
  /** `--stream`: Go says `Streaming request` / `Stream complete` in its turn lines. */
  stream: boolean;
}

/**
 * Renders the event stream as the `--verbose` lines of Go axe: its block before
 * the first call (`Model:` … `Memory:`, with `run`), `[turn N]` lines for a top-level agent with
 * tools (a single call has none, as in Go), `[sub-agent]` lines for every call_agent, `[tool]`,
 * `[mcp]` and `[retry]` lines. Returns the lines an event produces (none for most).
 */
export function createVerboseFormatter(run?: VerboseRunInfo): (event: RunEvent) => string[] {
  const toolInputs = new Map<string, unknown>();
  let loops = true;
  return (event) => {
    switch (event.type) {
      case 'agent.ready':
        if (event.depth !== 0) return [];
        loops = event.tools > 0;
        return run ? preCallBlock(event, run) : [];
      case 'turn.start':
        if (event.depth !== 0 || !loops) return [];
        return [
          run?.stream
            ? `[turn ${event.turn}] Streaming request (${event.messages} messages)`
            : `[turn ${event.turn}] Sending request (${event.messages} messages, ${event.pendingToolCalls} tool calls pending)`,
        ];
      case 'turn.end':
        if (event.depth !== 0 || !loops) return [];
        return [
          `[turn ${event.turn}] ${run?.stream ? 'Stream complete' : 'Received response'}: ${event.stopReason} (${event.toolCalls} tool calls)`,
        ];
      case 'agent.start':
        if (event.depth === 0) return [];
        return [
          `[sub-agent] Calling "${event.agent}" (depth ${event.depth}) with task: ${preview(event.task, TASK_PREVIEW_CHARS)}`,
        ];
      case 'agent.end':
        if (event.depth === 0) return [];
        if (event.status === 'completed') {
          return [
            `[sub-agent] "${event.agent}" completed in ${event.durationMs}ms (${event.chars} chars returned)`,
          ];
        }
        return [`[sub-agent] "${event.agent}" failed: ${event.error ?? event.status}`];
      case 'tool.start':
        if (!DELEGATION_TOOLS.has(event.name)) toolInputs.set(toolKey(event.path, event.callId), event.input);
        return [];
      case 'tool.end': {
        if (DELEGATION_TOOLS.has(event.name)) return [];
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

/** Go axe's lines before the first call, in its order and spacing. */
function preCallBlock(event: Extract<RunEvent, { type: 'agent.ready' }>, run: VerboseRunInfo): string[] {
  const format = event.responseFormat !== undefined ? `, response_format=${event.responseFormat}` : '';
  const lines = [
    `Model:    ${event.model}`,
    `Workdir:  ${event.workdir}`,
    `Skill:    ${event.skill ?? '(none)'}`,
    `Files:    ${event.files} file(s)`,
    `Prompt:   ${run.promptSource}`,
    `Timeout:  ${run.timeoutSeconds}s`,
    `Params:   temperature=${event.temperature ?? 0}, max_tokens=${event.maxTokens ?? 0}${format}`,
  ];
  if (event.memory) {
    lines.push(
      event.memory.count > 0
        ? `Memory:   ${event.memory.count} entries loaded from ${event.memory.file}`
        : 'Memory:   0 entries (no memory file)',
    );
  }
  return lines;
}

/** The closing lines of `--verbose`: duration, cumulative tokens, stop reason, tree totals. */
export function verboseSummary(outcome: RunOutcome, price?: Pricer): string[] {
  const { result, budget, error } = outcome;
  // Go axe: a failed call prints its duration only (the error line follows).
  if (error !== undefined && !(error instanceof BudgetError)) return [`Duration: ${result.durationMs}ms`];
  const tokens = `${result.usage.inputTokens} input, ${result.usage.outputTokens} output`;
  const qualifier =
    budget.limit !== undefined
      ? ` (cumulative, budget: ${budget.used}/${budget.limit})`
      : result.turns > 1
        ? ' (cumulative)'
        : '';
  const lines = [`Duration: ${result.durationMs}ms`, `Tokens:   ${tokens}${qualifier}`];
  const cache = cacheUsageText(result.usage);
  if (cache !== undefined) lines.push(`Cache:    ${cache}`);
  const reasoning = result.usage.reasoningTokens;
  if (reasoning !== undefined && reasoning > 0) lines.push(`Reasoning: ${reasoning} of the output tokens`);
  if (result.stopReason !== '') lines.push(`Stop:     ${result.stopReason}`);
  if (result.refusal !== undefined) lines.push(`Refused:  ${result.refusal}`);
  const calls = countSubAgentCalls(result.children);
  if (calls > 0) lines.push(`Agents:   ${calls} sub-agent call(s), ${budget.used} tokens across the tree`);
  const dollars = price && treeDollars(result, price);
  if (dollars) lines.push(`Cost:     ${costText(dollars.usd, dollars.usdWithoutCache)}`);
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
