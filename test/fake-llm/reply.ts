import { parseJson } from './json.js';
import type { RecordedRequest, ScriptedReply, ScriptedToolCall } from './types.js';

/** Token counts used when a reply scripts no usage. */
const DEFAULT_USAGE = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 } as const;

export interface ReplyUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  cost?: number;
  reasoning: number;
  reasoningBeside: boolean;
}

export function usageOf(reply: ScriptedReply): ReplyUsage {
  const scripted = reply.usage ?? {};
  return {
    input: scripted.input ?? DEFAULT_USAGE.input,
    output: scripted.output ?? DEFAULT_USAGE.output,
    cacheRead: scripted.cacheRead ?? DEFAULT_USAGE.cacheRead,
    cacheWrite: scripted.cacheWrite ?? DEFAULT_USAGE.cacheWrite,
    reasoning: scripted.reasoning ?? 0,
    reasoningBeside: scripted.reasoningBeside ?? false,
    ...(scripted.cost === undefined ? {} : { cost: scripted.cost }),
  };
}

export function servedModel(reply: ScriptedReply, request: RecordedRequest): string {
  return reply.model ?? request.model;
}

/** Arguments as the JSON text OpenAI / Anthropic stream them; a scripted string goes out raw. */
export function argumentsText(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

/** Arguments as a JSON value for wires that carry objects; an unparseable string stays a string. */
export function argumentsValue(call: ScriptedToolCall): unknown {
  if (typeof call.arguments !== 'string') return call.arguments;
  return parseJson(call.arguments) ?? call.arguments;
}

export function toolCallId(
  prefix: string,
  request: RecordedRequest,
  call: ScriptedToolCall,
  i: number,
): string {
  return call.id ?? `${prefix}${String(request.index).padStart(3, '0')}${i}fake`;
}
