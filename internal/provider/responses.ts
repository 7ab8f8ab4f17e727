import {
  type ErrorInfo,
  isObject,
  nestedErrorInfo,
  objectAt,
  optArray,
  optNumber,
  optObject,
  optString,
  parseJson,
  WireError,
  wireErrorFrom,
} from './json.js';
import { type ResponseBuilder, toolCallFrom, type WireResponse } from './response-builder.js';
import {
  type ChatRequest,
  emptyUsage,
  type JsonObject,
  type JsonValue,
  type Message,
  type ResponseFormat,
  type ToolCall,
  type Usage,
} from './types.js';
import { bearerAuth, type StreamTranslator, trimSlash, type Wire } from './wire.js';

/**
 * The OpenAI Responses API (`POST {base}/responses`): stateless, every turn sent as `input` items —
 * messages, `function_call` and `function_call_output` — with the system prompt as `instructions`.
 */
export function toWire(request: ChatRequest): JsonObject {
  const body: JsonObject = { model: request.model, input: request.messages.flatMap(inputItems) };
  if (request.system !== '') body.instructions = request.system;
  if (request.tools !== undefined && request.tools.length > 0) {
    // strict: false — the API's default (true) demands every property be required.
    body.tools = request.tools.map((tool) => ({
      type: 'function',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      strict: false,
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.maxTokens !== undefined) body.max_output_tokens = request.maxTokens;
  if (request.reasoningEffort !== undefined) body.reasoning = { effort: request.reasoningEffort };
  if (request.responseFormat !== undefined) body.text = { format: formatToWire(request.responseFormat) };
  if (request.stream) body.stream = true;
  return body;
}

function formatToWire(format: ResponseFormat): JsonObject {
  if (format.type !== 'json_schema') return { type: format.type };
  const wire: JsonObject = { type: 'json_schema', name: format.name, schema: format.schema };
  if (format.strict !== undefined) wire.strict = format.strict;
  if (format.description !== undefined) wire.description = format.description;
  return wire;
}

function inputItems(message: Message): JsonObject[] {
  if (message.role === 'user') return [{ role: 'user', content: message.content }];
  if (message.role === 'tool') {
    return message.results.map((result) => ({
      type: 'function_call_output',
      call_id: result.callId,
      output: result.content,
    }));
  }
  const items: JsonObject[] = message.content === '' ? [] : [{ role: 'assistant', content: message.content }];
  for (const call of message.toolCalls ?? []) {
    items.push({
      type: 'function_call',
      call_id: call.id,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
    });
  }
  return items;
}

/** `input_tokens` includes the cached and cache-written ones; `output_tokens` includes reasoning. */
function usageFromWire(usage: JsonObject | undefined): Partial<Usage> {
  if (usage === undefined) return {};
  const input = optNumber(usage.input_tokens) ?? 0;
  const details = optObject(usage.input_tokens_details);
  const cached = optNumber(details?.cached_tokens) ?? 0;
  const written = optNumber(details?.cache_write_tokens) ?? 0;
  const reasoning = optNumber(optObject(usage.output_tokens_details)?.reasoning_tokens) ?? 0;
  return {
    inputTokens: Math.max(0, input - cached - written),
    outputTokens: optNumber(usage.output_tokens) ?? 0,
    cacheReadTokens: cached,
    cacheWriteTokens: written,
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

/** `completed`, or why it stopped short (`max_output_tokens`, `content_filter`). */
function stopReasonOf(response: JsonObject): string {
  const incomplete = optString(optObject(response.incomplete_details)?.reason);
  return incomplete ?? optString(response.status) ?? '';
}

function throwIfFailed(response: JsonObject): void {
  const error = optObject(response.error);
  if (response.status === 'failed' || error !== undefined) {
    throw new WireError(optString(error?.message) ?? 'the response failed', {
      providerType: optString(error?.code),
    });
  }
}

export function fromWire(json: JsonValue): WireResponse {
  const body = objectAt(json, 'response body');
  const info = nestedErrorInfo(body, ERROR_TYPE_FIELDS);
  if (info !== undefined && body.object !== 'response') throw wireErrorFrom(info);
  throwIfFailed(body);
  let content = '';
  let refusal = '';
  const toolCalls: ToolCall[] = [];
  for (const item of optArray(body.output).filter(isObject)) {
    if (item.type === 'message') {
      content += messageText(item, 'output_text', 'text');
      refusal += messageText(item, 'refusal', 'refusal');
    } else if (item.type === 'function_call') {
      toolCalls.push(
        toolCallFrom(callIdOf(item), optString(item.name) ?? '', optString(item.arguments) ?? ''),
      );
    }
  }
  return {
    content,
    toolCalls,
    stopReason: stopReasonOf(body),
    usage: { ...emptyUsage(), ...usageFromWire(optObject(body.usage)) },
    model: optString(body.model) ?? '',
    ...(refusal !== '' ? { refusal } : {}),
  };
}

/** The `field` of a message's content parts of type `type` (`output_text` / `refusal`). */
function messageText(item: JsonObject, type: string, field: string): string {
  return optArray(item.content)
    .filter(isObject)
    .map((part) => (part.type === type ? (optString(part[field]) ?? '') : ''))
    .join('');
}

/** The id a `function_call_output` must answer: `call_id` (the item's own `id` is another thing). */
function callIdOf(item: JsonObject): string {
  return optString(item.call_id) ?? optString(item.id) ?? '';
}

const ERROR_TYPE_FIELDS = ['type', 'code'];

function errorInfo(json: JsonValue): ErrorInfo {
  return nestedErrorInfo(json, ERROR_TYPE_FIELDS) ?? {};
}

/** Named SSE events, each with its `type`; the stream ends with `response.completed` (or incomplete / failed). */
function createStream(builder: ResponseBuilder): StreamTranslator {
  let complete = false;
  const argumentsSeen = new Set<number>();
  return {
    get complete() {
      return complete;
    },
    message({ data }) {
      const event = objectAt(parseJson(data, 'stream event'), 'stream event');
      const index = optNumber(event.output_index) ?? 0;
      switch (event.type) {
        case 'response.output_text.delta':
          builder.addText(optString(event.delta) ?? '');
          break;
        case 'response.refusal.delta':
          builder.addRefusal(optString(event.delta) ?? '');
          break;
        case 'response.output_item.added': {
          const item = optObject(event.item);
          if (item?.type !== 'function_call') break;
          builder.startToolCall(index, callIdOf(item), optString(item.name) ?? '');
          const initial = optString(item.arguments) ?? '';
          if (initial !== '') argumentsSeen.add(index);
          builder.addToolArguments(index, initial);
          break;
        }
        case 'response.function_call_arguments.delta':
          argumentsSeen.add(index);
          builder.addToolArguments(index, optString(event.delta) ?? '');
          break;
        case 'response.output_item.done': {
          const item = optObject(event.item);
          if (item?.type !== 'function_call') break;
          // A server that sends the call whole in `done` only: its arguments come from there.
          if (!builder.hasToolCall(index))
            builder.startToolCall(index, callIdOf(item), optString(item.name) ?? '');
          if (!argumentsSeen.has(index)) builder.addToolArguments(index, optString(item.arguments) ?? '');
          builder.endToolCall(index);
          break;
        }
        case 'response.completed':
        case 'response.incomplete':
        case 'response.failed': {
          const response = objectAt(event.response, `${event.type} response`);
          throwIfFailed(response);
          builder.setModel(optString(response.model) ?? '');
          builder.setUsage(usageFromWire(optObject(response.usage)));
          builder.setStopReason(stopReasonOf(response));
          complete = true;
          break;
        }
        case 'error':
          throw new WireError(optString(event.message) ?? 'stream error', {
            providerType: optString(event.code),
          });
        default:
          break;
      }
    },
  };
}

export const responsesWire: Wire = {
  streamFormat: 'sse',
  url: (baseUrl) => `${trimSlash(baseUrl)}/responses`,
  authHeaders: bearerAuth,
  toWire,
  fromWire,
  createStream,
  errorInfo,
};
