import type { ChatRequest, ToolSpec } from './types.js';

/**
 * Where Anthropic's and Bedrock's prompt-cache breakpoints go. Both bill a cache write at 1.25×
 * the input price and a read at 0.1×, and cache nothing shorter than the model's minimum, so a
 * breakpoint pays off only when a later request reads it:
 *
 * - after the tools and the system prompt (the API puts tools first): on every request of an
 *   agent that may take more than one turn, once they are long enough to be cached;
 * - on the newest message of every follow-up request (one with an answer of the model in it): the
 *   next turn reads everything up to there, and writes only what it adds. The API finds the
 *   previous turn's entry by itself (it looks up to 20 blocks back from a breakpoint), so two
 *   breakpoints of the four allowed are enough.
 */

/** The shortest prefix each model caches, in tokens (Anthropic's table; Bedrock's ids carry the same names). */
export function cacheMinimumTokens(model: string): number {
  if (/opus-4-[5-9]|haiku-4-[5-9]/.test(model)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(model)) return 2048;
  return 1024;
}

/**
 * A generous guess at the tokens of the tools and system prompt (English and JSON run at 3.5–4
 * bytes a token): a breakpoint under the minimum is ignored by the API at no charge, a missed one
 * costs every later turn the full price, so the guess errs high.
 */
function estimatedPrefixTokens(request: ChatRequest): number {
  return Math.ceil((toolBytes(request.tools) + Buffer.byteLength(request.system)) / 3);
}

/** The tools' JSON size, measured once per list: a loop sends the same list every turn. */
const TOOL_BYTES = new WeakMap<readonly ToolSpec[], number>();

function toolBytes(tools: readonly ToolSpec[] | undefined): number {
  if (tools === undefined) return 0;
  let bytes = TOOL_BYTES.get(tools);
  if (bytes === undefined) {
    bytes = Buffer.byteLength(JSON.stringify(tools));
    TOOL_BYTES.set(tools, bytes);
  }
  return bytes;
}

export interface Breakpoints {
  /** After the system prompt (with the tools before it). */
  system: boolean;
  /** On the last content block of the newest message. */
  newest: boolean;
}

export function breakpointsOf(request: ChatRequest): Breakpoints {
  const mode = request.promptCaching;
  if (mode === undefined) return { system: false, newest: false };
  if (mode === 'system') return { system: request.system !== '', newest: false };
  const followUp = request.messages.some((m) => m.role === 'assistant');
  const system = request.system !== '' && estimatedPrefixTokens(request) >= cacheMinimumTokens(request.model);
  return { system, newest: followUp };
}
