import { functionCallFromWire, functionToolsToWire } from './function-tools.js';
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

/** OpenAI Chat Completions (also OpenRouter and every OpenAI-compatible server): `POST {base}/chat/completions`. */
export function toWire(request: ChatRequest): JsonObject {
  const messages: JsonObject[] = [];
  if (request.system !== '') messages.push({ role: 'system', content: request.system });
  for (const message of request.messages) messages.push(...messageToWire(message));
  const body: JsonObject = { model: request.model, messages };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = functionToolsToWire(request.tools);
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.maxTokens !== undefined) body.max_completion_tokens = request.maxTokens;
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.responseFormat !== undefined)
    body.response_format = responseFormatToWire(request.responseFormat);
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function responseFormatToWire(format: ResponseFormat): JsonObject {
  if (format.type !== 'json_schema') return { type: format.type };
  const schema: JsonObject = { name: format.name, schema: format.schema };
  if (format.strict !== undefined) schema.strict = format.strict;
  if (format.description !== undefined) schema.description = format.description;
  return { type: 'json_schema', json_schema: schema };
}

function messageToWire(message: Message): JsonObject[] {
  if (message.role === 'user') return [{ role: 'user', content: message.content }];
  if (message.role === 'tool') {
    return message.results.map((result) => ({
      role: 'tool',
      tool_call_id: result.callId,
      content: result.content,
    }));
  }
  const calls = message.toolCalls ?? [];
  if (calls.length === 0) return [{ role: 'assistant', content: message.content }];
  // DeepSeek's thinking mode (and compatible servers) want the turn's reasoning back with its calls.
  const reasoning = (message.reasoning ?? []).flatMap((block) =>
    block.type === 'thinking' ? [block.text] : [],
  );
  return [
    {
      role: 'assistant',
      content: message.content === '' ? null : message.content,
      ...(reasoning.length > 0 ? { reasoning_content: reasoning.join('') } : {}),
      tool_calls: calls.map((call) => ({
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.arguments) },
      })),
    },
  ];
}

/**
 * `content` as a string, or as an array of parts (Mistral: `[{type: "thinking", …}, {type:
 * "text", text: "…"}]`): the text parts, in order. Thinking parts are not the answer.
 */
function textOf(content: JsonValue | undefined): string {
  if (typeof content === 'string') return content;
  return optArray(content)
    .filter(isObject)
    .map((part) => (part.type === 'text' ? (optString(part.text) ?? '') : ''))
    .join('');
}

/**
 * `prompt_tokens` includes cached tokens; `inputTokens` counts the uncached ones, as Anthropic does.
 * Some xAI models report `prompt_tokens` without the cached ones (`cached_tokens` is then the larger,
 * and `total_tokens` counts both), as Vercel's AI SDK found (vercel/ai#12485): the prompt is then the
 * two together.
 */
function usageFromWire(usage: JsonObject | undefined): Partial<Usage> {
  if (usage === undefined) return {};
  const reported = optNumber(usage.prompt_tokens) ?? 0;
  const cached = optNumber(optObject(usage.prompt_tokens_details)?.cached_tokens) ?? 0;
  const prompt = cached > reported ? reported + cached : reported;
  const completion = optNumber(usage.completion_tokens) ?? 0;
  const reasoning = optNumber(optObject(usage.completion_tokens_details)?.reasoning_tokens) ?? 0;
  // OpenAI counts reasoning inside completion_tokens; xAI and Gemini's OpenAI endpoint count it
  // beside them, which their total_tokens shows (cached tokens left out of prompt_tokens would
  // otherwise look like room for the reasoning, and count it twice).
  const total = optNumber(usage.total_tokens);
  const beside = reasoning > 0 && total !== undefined && total >= prompt + completion + reasoning;
  return {
    inputTokens: prompt - cached,
    outputTokens: completion + (beside ? reasoning : 0),
    cacheReadTokens: cached,
    ...(reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

/** OpenAI puts a string `code` (`rate_limit_exceeded`); OpenRouter a numeric one (an HTTP status). */
const ERROR_TYPE_FIELDS = ['type', 'code'];

function throwIfError(body: JsonObject): void {
  const info = nestedErrorInfo(body, ERROR_TYPE_FIELDS);
  if (info !== undefined) throw wireErrorFrom(info);
}

export function fromWire(json: JsonValue): WireResponse {
  const body = objectAt(json, 'response body');
  throwIfError(body);
  const choices = optArray(body.choices);
  if (choices.length === 0) throw new WireError('unexpected response: no choices');
  const choice = objectAt(choices[0], 'choices[0]');
  const message = objectAt(choice.message, 'choices[0].message');
  const toolCalls: ToolCall[] = optArray(message.tool_calls)
    .filter(isObject)
    .map((call) => {
      const { id, name, rawArguments } = functionCallFromWire(call, '');
      return toolCallFrom(id, name, rawArguments);
    });
  const response: WireResponse = {
    content: textOf(message.content),
    toolCalls,
    stopReason: optString(choice.finish_reason) ?? '',
    usage: { ...emptyUsage(), ...usageFromWire(optObject(body.usage)) },
    model: optString(body.model) ?? '',
  };
  const cost = optNumber(optObject(body.usage)?.cost);
  if (cost !== undefined) response.cost = cost;
  const refusal = optString(message.refusal);
  if (refusal) response.refusal = refusal;
  const reasoning = optString(message.reasoning_content);
  if (reasoning) response.reasoning = [{ type: 'thinking', text: reasoning }];
  return response;
}

function errorInfo(json: JsonValue): ErrorInfo {
  return nestedErrorInfo(json, ERROR_TYPE_FIELDS) ?? {};
}

/** Data-only SSE ending in `[DONE]`; tool calls are assembled by their `index`. */
function createStream(builder: ResponseBuilder): StreamTranslator {
  let complete = false;
  let usageSeen = false;
  const idByIndex = new Map<number, string>();
  let indexOffset = 0;
  return {
    // `[DONE]` ends the stream; a server that omits it is accepted once the finish and usage came.
    get complete() {
      return complete || (builder.stopped && usageSeen);
    },
    message({ data }) {
      if (data.trim() === '[DONE]') {
        complete = true;
        return;
      }
      const chunk = objectAt(parseJson(data, 'stream event'), 'stream event');
      throwIfError(chunk);
      builder.setModel(optString(chunk.model) ?? '');
      const usage = optObject(chunk.usage);
      if (usage !== undefined) {
        usageSeen = true;
        builder.setUsage(usageFromWire(usage));
      }
      const cost = optNumber(usage?.cost);
      if (cost !== undefined) builder.setCost(cost);
      for (const choice of optArray(chunk.choices).filter(isObject)) {
        const delta = optObject(choice.delta);
        builder.addText(textOf(delta?.content));
        builder.addRefusal(optString(delta?.refusal) ?? '');
        builder.addThinking(0, optString(delta?.reasoning_content) ?? '');
        for (const call of optArray(delta?.tool_calls).filter(isObject)) {
          const id = optString(call.id);
          const fn = optObject(call.function);
          // Some compatible servers send every call whole at index 0 (or with no index): a new id
          // at a known index starts a new call.
          const wireIndex = optNumber(call.index) ?? 0;
          if (id !== undefined && id !== '' && idByIndex.has(wireIndex) && idByIndex.get(wireIndex) !== id) {
            indexOffset += 1;
          }
          const index = wireIndex + indexOffset;
          // The id and name may come in a later delta than the call's first: as in the openai SDK,
          // a non-empty one replaces the one held.
          const name = optString(fn?.name) ?? '';
          builder.identifyToolCall(index, id ?? '', name);
          if (id !== undefined && id !== '') idByIndex.set(wireIndex, id);
          builder.addToolArguments(index, optString(fn?.arguments) ?? '');
        }
        const finish = optString(choice.finish_reason);
        if (finish !== undefined) builder.setStopReason(finish);
      }
    },
  };
}

export const openaiWire: Wire = {
  streamFormat: 'sse',
  url: (baseUrl) => `${trimSlash(baseUrl)}/chat/completions`,
  authHeaders: bearerAuth,
  toWire,
  fromWire,
  createStream,
  errorInfo,
};
