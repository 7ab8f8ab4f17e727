import { structuredOutputSchema } from './anthropic-schema.js';
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
  wireErrorFrom,
} from './json.js';
import { breakpointsOf } from './prompt-cache.js';
import { type ResponseBuilder, toolCallFrom, type WireResponse } from './response-builder.js';
import {
  type ChatRequest,
  emptyUsage,
  type JsonObject,
  type JsonValue,
  type Message,
  type Reasoning,
  type ToolCall,
  type Usage,
} from './types.js';
import { type StreamTranslator, trimSlash, type Wire } from './wire.js';

/**
 * Anthropic requires `max_tokens`; this stands in when the agent sets none, as much beyond a
 * thinking budget (which must be below max_tokens) when there is one.
 */
const DEFAULT_MAX_TOKENS = 4096;

/** Anthropic Messages API: `POST {base}/v1/messages`. */
export function toWire(request: ChatRequest): JsonObject {
  const breakpoints = breakpointsOf(request);
  const messages = request.messages.flatMap(messageToWire);
  if (breakpoints.newest) markNewest(messages);
  const body: JsonObject = {
    model: request.model,
    max_tokens: request.maxTokens ?? (request.thinkingBudget ?? 0) + DEFAULT_MAX_TOKENS,
    messages,
  };
  if (request.system !== '') {
    // A string, as Go axe sends it; a block when it is a cache breakpoint.
    body.system = breakpoints.system
      ? [{ type: 'text', text: request.system, cache_control: CACHE_CONTROL }]
      : request.system;
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.parameters,
    }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.thinkingBudget !== undefined) {
    body.thinking = { type: 'enabled', budget_tokens: request.thinkingBudget };
  }
  // json_object has no equivalent here (request-support.ts warns before the run).
  if (request.responseFormat?.type === 'json_schema') {
    body.output_config = {
      format: { type: 'json_schema', schema: structuredOutputSchema(request.responseFormat.schema) },
    };
  }
  if (request.stream) body.stream = true;
  return body;
}

const CACHE_CONTROL: JsonObject = { type: 'ephemeral' };

/**
 * The newest message's last block becomes a cache breakpoint (a string content becomes one text
 * block: the same tokens to the API). Thinking blocks cannot carry one, and are never last.
 */
function markNewest(messages: JsonObject[]): void {
  const newest = messages.at(-1);
  if (newest === undefined) return;
  const content = newest.content;
  if (typeof content === 'string') {
    if (content !== '') newest.content = [{ type: 'text', text: content, cache_control: CACHE_CONTROL }];
    return;
  }
  const last = Array.isArray(content) ? content.at(-1) : undefined;
  if (isObject(last) && last.type !== 'thinking' && last.type !== 'redacted_thinking') {
    last.cache_control = CACHE_CONTROL;
  }
}

function messageToWire(message: Message): JsonObject[] {
  if (message.role === 'user') return [{ role: 'user', content: message.content }];
  if (message.role === 'tool') {
    return [
      {
        role: 'user',
        content: message.results.map((result) => ({
          type: 'tool_result',
          tool_use_id: result.callId,
          content: result.content,
          is_error: result.isError,
        })),
      },
    ];
  }
  // Thinking blocks come back first, with their signatures (the API checks them); Anthropic
  // rejects empty text blocks: text only when there is some.
  const content: JsonObject[] = (message.reasoning ?? []).flatMap(thinkingToWire);
  if (message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls ?? []) {
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments });
  }
  return content.length === 0 ? [] : [{ role: 'assistant', content }];
}

/** A thinking block without a signature (another wire's reasoning) cannot be sent to Anthropic. */
function thinkingToWire(block: Reasoning): JsonObject[] {
  if (block.type === 'redacted') return [{ type: 'redacted_thinking', data: block.data }];
  return block.signature === undefined
    ? []
    : [{ type: 'thinking', thinking: block.text, signature: block.signature }];
}

function usageFromWire(usage: JsonObject | undefined): Partial<Usage> {
  if (usage === undefined) return {};
  const out: Partial<Usage> = {};
  const input = optNumber(usage.input_tokens);
  const output = optNumber(usage.output_tokens);
  const cacheRead = optNumber(usage.cache_read_input_tokens);
  const cacheWrite = optNumber(usage.cache_creation_input_tokens);
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  if (cacheRead !== undefined) out.cacheReadTokens = cacheRead;
  if (cacheWrite !== undefined) out.cacheWriteTokens = cacheWrite;
  return out;
}

export function fromWire(json: JsonValue): WireResponse {
  const body = objectAt(json, 'response body');
  if (body.type === 'error') throw wireErrorFrom(errorInfo(body));
  let content = '';
  const toolCalls: ToolCall[] = [];
  const reasoning: Reasoning[] = [];
  for (const block of optArray(body.content)) {
    if (!isObject(block)) continue;
    if (block.type === 'thinking') {
      const signature = optString(block.signature);
      reasoning.push({
        type: 'thinking',
        text: optString(block.thinking) ?? '',
        ...(signature ? { signature } : {}),
      });
    } else if (block.type === 'redacted_thinking')
      reasoning.push({ type: 'redacted', data: optString(block.data) ?? '' });
    else if (block.type === 'text') content += optString(block.text) ?? '';
    else if (block.type === 'tool_use') {
      toolCalls.push(
        toolCallFrom(
          optString(block.id) ?? '',
          optString(block.name) ?? '',
          JSON.stringify(block.input ?? {}),
        ),
      );
    }
  }
  return {
    content,
    toolCalls,
    stopReason: optString(body.stop_reason) ?? '',
    usage: { ...emptyUsage(), ...usageFromWire(optObject(body.usage)) },
    model: optString(body.model) ?? '',
    ...(reasoning.length > 0 ? { reasoning } : {}),
  };
}

function errorInfo(json: JsonValue): ErrorInfo {
  return nestedErrorInfo(json, ['type']) ?? {};
}

/** Named SSE events: message_start, content_block_*, message_delta, message_stop, ping, error. */
function createStream(builder: ResponseBuilder): StreamTranslator {
  let complete = false;
  return {
    get complete() {
      return complete;
    },
    message({ data }) {
      const event = objectAt(parseJson(data, 'stream event'), 'stream event');
      switch (event.type) {
        case 'message_start': {
          const message = optObject(event.message);
          builder.setModel(optString(message?.model) ?? '');
          builder.setUsage(usageFromWire(optObject(message?.usage)));
          return;
        }
        case 'content_block_start': {
          const index = optNumber(event.index) ?? 0;
          const block = optObject(event.content_block);
          if (block?.type === 'tool_use') {
            builder.startToolCall(index, optString(block.id) ?? '', optString(block.name) ?? '');
            // Anthropic sends `input: {}` and the arguments as deltas; some compatible servers
            // send the whole input here instead.
            const input = optObject(block.input);
            if (input !== undefined && Object.keys(input).length > 0) {
              builder.addToolArguments(index, JSON.stringify(input));
            }
          } else if (block?.type === 'text') builder.addText(optString(block.text) ?? '');
          else if (block?.type === 'thinking') builder.addThinking(index, optString(block.thinking) ?? '');
          else if (block?.type === 'redacted_thinking')
            builder.addRedactedThinking(index, optString(block.data) ?? '');
          return;
        }
        case 'content_block_delta': {
          const index = optNumber(event.index) ?? 0;
          const delta = optObject(event.delta);
          if (delta?.type === 'text_delta') builder.addText(optString(delta.text) ?? '');
          else if (delta?.type === 'thinking_delta')
            builder.addThinking(index, optString(delta.thinking) ?? '');
          else if (delta?.type === 'signature_delta') {
            builder.setThinkingSignature(index, optString(delta.signature) ?? '');
          } else if (delta?.type === 'input_json_delta') {
            builder.addToolArguments(index, optString(delta.partial_json) ?? '');
          }
          return;
        }
        case 'content_block_stop':
          builder.endToolCall(optNumber(event.index) ?? 0);
          return;
        case 'message_delta': {
          const stop = optString(optObject(event.delta)?.stop_reason);
          if (stop !== undefined) builder.setStopReason(stop);
          builder.setUsage(usageFromWire(optObject(event.usage)));
          return;
        }
        case 'message_stop':
          complete = true;
          return;
        case 'error':
          throw wireErrorFrom(errorInfo(event));
        default:
          return; // ping and future event types
      }
    },
  };
}

export const anthropicWire: Wire = {
  streamFormat: 'sse',
  url: (baseUrl) => `${trimSlash(baseUrl)}/v1/messages`,
  authHeaders: (apiKey): Record<string, string> => ({
    'anthropic-version': '2023-06-01',
    ...(apiKey === undefined ? {} : { 'x-api-key': apiKey }),
  }),
  toWire,
  fromWire,
  createStream,
  errorInfo,
};
