import type { Message, ToolCall, ToolResult } from '../provider/types.js';

/**
 * The conversation with no tool call left unanswered: an assistant turn whose calls did not all
 * get their results in the next message is cut back to its text (and dropped when it has none);
 * results that answer no call of the turn before them are dropped. Every API refuses a tool call
 * without its result, so this is what a conversation that stopped mid-turn can be sent as.
 */
export function resolvedHistory(messages: readonly Message[]): Message[] {
  const kept: Message[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as Message;
    if (message.role === 'tool') continue;
    if (message.role === 'user' || !message.toolCalls || message.toolCalls.length === 0) {
      kept.push(message);
      continue;
    }
    const next = messages[i + 1];
    const results = next?.role === 'tool' ? answers(message.toolCalls, next.results) : [];
    if (results.length === message.toolCalls.length) {
      kept.push(message, { role: 'tool', results });
      i++;
    } else if (message.content !== '') {
      kept.push({ role: 'assistant', content: message.content });
    }
  }
  return kept;
}

/**
 * The conversation for a request that offers no tools: Anthropic and Bedrock refuse tool blocks
 * then, so each call and result is told as text. Turns of one role that end up adjacent are joined.
 */
export function withoutToolBlocks(messages: readonly Message[]): Message[] {
  const told: Message[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const text = message.results
        .map((result) => `[${result.name} ${result.isError ? 'failed' : 'returned'}]\n${result.content}`)
        .join('\n\n');
      appendText(told, 'user', text);
    } else if (message.role === 'assistant' && message.toolCalls && message.toolCalls.length > 0) {
      const calls = message.toolCalls.map(describeCall);
      appendText(told, 'assistant', [message.content, ...calls].filter((part) => part !== '').join('\n\n'));
    } else {
      appendText(told, message.role, message.content, message);
    }
  }
  return told;
}

/** The history without what only the wire that produced it reads: reasoning and call signatures. */
export function portableHistory(messages: readonly Message[]): Message[] {
  return messages.map((message) => {
    if (message.role !== 'assistant') return message;
    const { reasoning: _reasoning, toolCalls, ...rest } = message;
    if (!toolCalls) return rest;
    return { ...rest, toolCalls: toolCalls.map(({ signature: _signature, ...call }) => call) };
  });
}

/** Adds `text` as a turn of `role`, joined to the last turn when that is plain text of the same role. */
export function appendText(
  messages: Message[],
  role: 'user' | 'assistant',
  text: string,
  original?: Message,
): void {
  const last = messages.at(-1);
  if (last && last.role === role && !('toolCalls' in last && last.toolCalls?.length)) {
    const joined = [last.content, text].filter((part) => part !== '').join('\n\n');
    messages[messages.length - 1] = { role, content: joined };
  } else if (original) {
    messages.push(original);
  } else {
    messages.push({ role, content: text });
  }
}

/** Each call's first result, in call order; shorter than `calls` when one has none. */
function answers(calls: readonly ToolCall[], results: readonly ToolResult[]): ToolResult[] {
  // By id: a fan-out's turn has hundreds of calls, and each of its forks resolves the history.
  const first = new Map<string, ToolResult>();
  for (const result of results) if (!first.has(result.callId)) first.set(result.callId, result);
  return calls.flatMap((call) => first.get(call.id) ?? []);
}

function describeCall(call: ToolCall): string {
  return `[called ${call.name} ${JSON.stringify(call.arguments)}]`;
}
