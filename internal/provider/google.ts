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
import { ResponseBuilder, type WireResponse } from './response-builder.js';
import type { ChatRequest, JsonObject, JsonValue, Message, Usage } from './types.js';
import { mergeSameRole, type StreamTranslator, trimSlash, type Wire } from './wire.js';

/**
 * Gemini: `POST {base}/v1beta/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`
 * when streaming). Gemini sends no tool-call ids; they are synthesised as `gemini_<i>`.
 * Schemas go in the JSON Schema fields (`parametersJsonSchema`, `responseJsonSchema`): the older
 * `parameters` / `responseSchema` take only an OpenAPI subset that refuses common JSON Schema
 * (`additionalProperties`, an object without properties).
 */
export function url(baseUrl: string, request: ChatRequest): string {
  const model = encodeURIComponent(request.model);
  const method = request.stream ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return `${trimSlash(baseUrl)}/v1beta/models/${model}:${method}`;
}

export function toWire(request: ChatRequest): JsonObject {
  const body: JsonObject = { contents: mergeSameRole(request.messages.flatMap(messageToWire), 'parts') };
  if (request.system !== '') body.systemInstruction = { parts: [{ text: request.system }] };
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
        })),
      },
    ];
  }
  const config: JsonObject = {};
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.thinkingBudget !== undefined)
    config.thinkingConfig = { thinkingBudget: request.thinkingBudget };
  const format = request.responseFormat;
  if (format?.type === 'json_object' || format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
  }
  if (format?.type === 'json_schema') config.responseJsonSchema = format.schema;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  return body;
}

function messageToWire(message: Message): JsonObject[] {
  if (message.role === 'user') return [{ role: 'user', parts: [{ text: message.content }] }];
  if (message.role === 'tool') {
    return [
      {
        role: 'user',
        parts: message.results.map((result) => ({
          functionResponse: {
            name: result.name,
            response: { [result.isError ? 'error' : 'output']: result.content },
          },
        })),
      },
    ];
  }
  const parts: JsonObject[] = [];
  if (message.content !== '') parts.push({ text: message.content });
  for (const call of message.toolCalls ?? []) {
    const part: JsonObject = { functionCall: { name: call.name, args: call.arguments } };
    if (call.signature !== undefined) part.thoughtSignature = call.signature;
    parts.push(part);
  }
  return parts.length === 0 ? [] : [{ role: 'model', parts }];
}

/** `promptTokenCount` includes cached tokens; thinking tokens are billed as output. */
function usageFromWire(metadata: JsonObject): Partial<Usage> {
  const prompt = optNumber(metadata.promptTokenCount) ?? 0;
  const cached = optNumber(metadata.cachedContentTokenCount) ?? 0;
  const thoughts = optNumber(metadata.thoughtsTokenCount) ?? 0;
  return {
    inputTokens: Math.max(0, prompt - cached),
    outputTokens: (optNumber(metadata.candidatesTokenCount) ?? 0) + thoughts,
    cacheReadTokens: cached,
    ...(thoughts > 0 ? { reasoningTokens: thoughts } : {}),
  };
}

function throwIfError(body: JsonObject): void {
  const info = nestedErrorInfo(body, ['status']);
  if (info !== undefined) throw wireErrorFrom(info);
}

/** Feeds one GenerateContentResponse (a whole response, or one chunk of a stream) to the builder. */
function addChunk(builder: ResponseBuilder, chunk: JsonObject, nextToolIndex: number): number {
  throwIfError(chunk);
  builder.setModel(optString(chunk.modelVersion) ?? '');
  const metadata = optObject(chunk.usageMetadata);
  if (metadata !== undefined) builder.setUsage(usageFromWire(metadata));
  let toolIndex = nextToolIndex;
  const candidate = optObject(optArray(chunk.candidates)[0]);
  for (const part of optArray(optObject(candidate?.content)?.parts).filter(isObject)) {
    const call = optObject(part.functionCall);
    if (call !== undefined) {
      const id = optString(call.id) ?? `gemini_${toolIndex}`;
      const args = JSON.stringify(call.args ?? {});
      builder.addWholeToolCall(
        toolIndex,
        id,
        optString(call.name) ?? '',
        args,
        optString(part.thoughtSignature),
      );
      toolIndex += 1;
    } else if (part.thought !== true) builder.addText(optString(part.text) ?? '');
  }
  const finish =
    optString(candidate?.finishReason) ?? optString(optObject(chunk.promptFeedback)?.blockReason);
  if (finish !== undefined) builder.setStopReason(finish);
  return toolIndex;
}

export function fromWire(json: JsonValue): WireResponse {
  const builder = new ResponseBuilder('');
  addChunk(builder, objectAt(json, 'response body'), 0);
  return builder.finish();
}

function errorInfo(json: JsonValue): ErrorInfo {
  const info = nestedErrorInfo(json, ['status']) ?? {};
  const wait = retryDelayOf(json);
  return wait === undefined ? info : { ...info, retryAfterMs: wait };
}

/** Gemini's 429 says how long to wait in `error.details[]` `RetryInfo.retryDelay` (`"34.4s"`). */
function retryDelayOf(json: JsonValue): number | undefined {
  const details = isObject(json) ? optArray(optObject(json.error)?.details) : [];
  for (const detail of details.filter(isObject)) {
    if (!String(detail['@type']).endsWith('google.rpc.RetryInfo')) continue;
    const delay = /^(\d+(?:\.\d+)?)s$/.exec(optString(detail.retryDelay) ?? '');
    if (delay) return Math.round(Number(delay[1]) * 1000);
  }
  return undefined;
}

/** Data-only SSE, each event a partial GenerateContentResponse; the last one carries `finishReason`. */
function createStream(builder: ResponseBuilder): StreamTranslator {
  let toolIndex = 0;
  return {
    get complete() {
      return builder.stopped;
    },
    message({ data }) {
      toolIndex = addChunk(builder, objectAt(parseJson(data, 'stream event'), 'stream event'), toolIndex);
    },
  };
}

export const googleWire: Wire = {
  streamFormat: 'sse',
  url,
  authHeaders: (apiKey): Record<string, string> => (apiKey === undefined ? {} : { 'x-goog-api-key': apiKey }),
  toWire,
  fromWire,
  createStream,
  errorInfo,
};
