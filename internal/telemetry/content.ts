import type { Message } from '../provider/types.js';

/*
 * Content attributes in the shape the GenAI conventions give them (JSON strings): messages as
 * `{ role, parts }`, each part `text`, `tool_call` or `tool_call_response`. Only made when content
 * capture is on.
 */

type Part =
  | { type: 'text'; content: string }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; response: string };

function partsOf(message: Message): Part[] {
  if (message.role === 'tool') {
    return message.results.map((result) => ({
      type: 'tool_call_response',
      id: result.callId,
      response: result.content,
    }));
  }
  const parts: Part[] = message.content !== '' ? [{ type: 'text', content: message.content }] : [];
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
    }
  }
  return parts;
}

/** `gen_ai.input.messages`: the conversation sent. */
export function inputMessages(messages: readonly Message[]): string {
  return JSON.stringify(messages.map((message) => ({ role: message.role, parts: partsOf(message) })));
}

/** `gen_ai.output.messages`: the answer. */
export function outputMessage(message: Message, finishReason: string | undefined): string {
  return JSON.stringify([
    { role: message.role, parts: partsOf(message), ...(finishReason ? { finish_reason: finishReason } : {}) },
  ]);
}

/** `gen_ai.system_instructions`. */
export function systemInstructions(system: string): string {
  return JSON.stringify([{ type: 'text', content: system }]);
}
