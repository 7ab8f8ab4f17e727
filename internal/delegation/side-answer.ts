import type { ChatResponse, Message } from '../provider/types.js';
import { appendText, resolvedHistory, withoutToolBlocks } from '../runner/history.js';
import type { LoopSetup } from '../runner/loop.js';

/**
 * The caller's side request: its conversation up to the call (told as text: no tools are offered),
 * then `prompt` (a child's question, or its request for approval). Reserved against the budget and
 * counted in the caller's limits like a turn.
 */
export async function sideAnswer(
  setup: LoopSetup,
  history: readonly Message[],
  prompt: string,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<string> {
  const { ctx } = setup;
  const messages = withoutToolBlocks(resolvedHistory(history));
  appendText(messages, 'user', prompt);
  const { tools: _tools, ...base } = setup.request;
  const request = { ...base, messages, stream: false };
  const release = await ctx.budget.reserve(request, signal);
  let response: ChatResponse;
  try {
    response = await ctx.limiter.run(() => setup.provider.chat(request, { signal, deadline }), signal);
    ctx.budget.add(response.usage);
    ctx.limits.addTokens(response.usage.inputTokens + response.usage.outputTokens);
  } finally {
    release();
  }
  return response.content;
}
