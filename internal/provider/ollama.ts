import { functionCallFromWire } from './function-tools.js';
import {
  type ErrorInfo,
  isObject,
  objectAt,
  optArray,
  optNumber,
  optObject,
  optString,
  parseJson,
  WireError,
} from './json.js';
import { ollamaTools } from './ollama-tools.js';
import { type ResponseBuilder, toolCallFrom, type WireResponse } from './response-builder.js';
import {
  type ChatRequest,
  emptyUsage,
  type JsonObject,
  type JsonValue,
  type Message,
  type Usage,
} from './types.js';
import { bearerAuth, type StreamTranslator, trimSlash, type Wire } from './wire.js';

/** Ollama: `POST {base}/api/chat`. Streams NDJSON by default, so `stream` is always sent. */
export function toWire(request: ChatRequest): JsonObject {
  const messages: JsonObject[] = [];
  if (request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(...messageToWire(message));
  const body: JsonObject = { model: request.model, messages, stream: request.stream };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = ollamaTools(request.tools);
  }
  const options: JsonObject = {};
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.topP !== undefined) options.top_p = request.topP;
  if (request.maxTokens !== undefined) options.num_predict = request.maxTokens;
  if (Object.keys(options).length > 0) body.options = options;
  const format = request.responseFormat;
  if (format?.type === 'json_object') body.format = 'json';
  else if (format?.type === 'json_schema') body.format = format.schema;
  return body;
}

function messageToWire(message: Message): JsonObject[] {
  if (message.role === 'user') return [{ role: 'user', content: message.content }];
  if (message.role === 'tool') {
    return message.results.map((result) => ({
      role: 'tool',
      content: result.content,
      tool_name: result.name,
    }));
  }
  const calls = message.toolCalls ?? [];
  if (calls.length === 0) return [{ role: 'assistant', content: message.content }];
  return [
    {
      role: 'assistant',
      content: message.content,
      tool_calls: calls.map((call) => ({ function: { name: call.name, arguments: call.arguments } })),
    },
  ];
}

function usageFromWire(body: JsonObject): Partial<Usage> {
  const out: Partial<Usage> = {};
  const input = optNumber(body.prompt_eval_count);
  const output = optNumber(body.eval_count);
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  return out;
}

/** Ollama sends no tool-call ids: they are synthesised from the position in the turn. */
function toolCallsFromWire(message: JsonObject | undefined, firstIndex: number) {
  return optArray(message?.tool_calls)
    .filter(isObject)
    .map((call, i) => functionCallFromWire(call, `ollama_${firstIndex + i}`));
}

function throwIfError(body: JsonObject): void {
  const message = optString(body.error);
  if (message !== undefined) throw new WireError(message);
}

export function fromWire(json: JsonValue): WireResponse {
  const body = objectAt(json, 'response body');
  throwIfError(body);
  const message = optObject(body.message);
  return {
    content: optString(message?.content) ?? '',
    toolCalls: toolCallsFromWire(message, 0).map((call) =>
      toolCallFrom(call.id, call.name, call.rawArguments),
    ),
    stopReason: optString(body.done_reason) ?? '',
    usage: { ...emptyUsage(), ...usageFromWire(body) },
    model: optString(body.model) ?? '',
  };
}

function errorInfo(json: JsonValue): ErrorInfo {
  const message = isObject(json) ? optString(json.error) : undefined;
  return message === undefined ? {} : { message };
}

/** NDJSON: content deltas, whole tool calls, then a `done: true` line with the counts. */
function createStream(builder: ResponseBuilder): StreamTranslator {
  let complete = false;
  let toolIndex = 0;
  return {
    get complete() {
      return complete;
    },
    message({ data }) {
      const chunk = objectAt(parseJson(data, 'stream line'), 'stream line');
      throwIfError(chunk);
      builder.setModel(optString(chunk.model) ?? '');
      const message = optObject(chunk.message);
      builder.addText(optString(message?.content) ?? '');
      for (const call of toolCallsFromWire(message, toolIndex)) {
        builder.addWholeToolCall(toolIndex, call.id, call.name, call.rawArguments);
        toolIndex += 1;
      }
      if (chunk.done === true) {
        builder.setStopReason(optString(chunk.done_reason) ?? '');
        builder.setUsage(usageFromWire(chunk));
        complete = true;
      }
    },
  };
}

export const ollamaWire: Wire = {
  streamFormat: 'ndjson',
  url: (baseUrl) => `${trimSlash(baseUrl)}/api/chat`,
  authHeaders: bearerAuth,
  toWire,
  fromWire,
  createStream,
  errorInfo,
};
