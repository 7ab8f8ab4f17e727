import type { ChatResponse, Message, ToolCall, ToolSpec } from '../provider/types.js';
import { appendText, resolvedHistory, withoutToolBlocks } from '../runner/history.js';
import type { ExecutedCall, LoopSetup, ToolHandler } from '../runner/loop.js';
import { toolFailure } from '../runner/result.js';
import { ASK_PARENT_TOOL_NAME } from '../tools/types.js';

/**
 * `ask_parent` (001's question escalation, `[sub_agents_config] ask_parent = true` in the
 * caller): a sub-agent asks instead of guessing. The question is answered by one side request to
 * the caller's model — its system prompt and its conversation up to the call, no tools —; the
 * caller's own loop is not disturbed.
 */
export interface AskParent {
  ask(question: string, signal: AbortSignal, deadline: number | undefined): Promise<string>;
  maxQuestions: number;
}

/** Puts a sub-agent's question to the person at the terminal (`--interactive`). */
export type AskPerson = (agent: string, question: string, signal: AbortSignal) => Promise<string>;

export const ASK_PARENT_TOOL_SPEC: ToolSpec = {
  name: ASK_PARENT_TOOL_NAME,
  description:
    'Ask the agent that gave you this task a question, instead of guessing, when something you need is unclear. It answers briefly from what it knows. Use it sparingly.',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', description: 'Your question, self-contained' } },
    required: ['question'],
  },
};

/** The sub-agent's `ask_parent`: at most `maxQuestions` questions per call. */
export function askParentHandler(
  parent: AskParent,
  run: { signal: AbortSignal; deadline: number | undefined },
): ToolHandler {
  let asked = 0;
  return async (call: ToolCall): Promise<ExecutedCall> => {
    const { question } = call.arguments;
    if (typeof question !== 'string' || question.trim() === '') {
      return { output: toolFailure('ask_parent error: "question" argument is required') };
    }
    if (asked >= parent.maxQuestions) {
      return {
        output: toolFailure(
          `ask_parent error: you have asked ${asked} questions, the most allowed: go on with what you know`,
        ),
      };
    }
    asked++;
    return { output: { content: await parent.ask(question, run.signal, run.deadline), isError: false } };
  };
}

/**
 * The caller's side request: its conversation up to the call (told as text: no tools are offered),
 * then the question. Reserved against the budget and counted in the caller's limits like a turn.
 */
export async function sideAnswer(
  setup: LoopSetup,
  agent: string,
  history: readonly Message[],
  question: string,
  signal: AbortSignal,
  deadline: number | undefined,
): Promise<string> {
  const { ctx } = setup;
  const messages = withoutToolBlocks(resolvedHistory(history));
  appendText(
    messages,
    'user',
    `Your sub-agent "${agent}" asks: ${question}. Answer briefly from what you know; you cannot use tools now.`,
  );
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
