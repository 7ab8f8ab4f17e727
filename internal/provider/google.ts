import { maskSecrets } from '../secrets.js';
import { oneLine, wholeCharsPrefix } from '../text.js';
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
import { ResponseBuilder, type WireResponse } from './response-builder.js';
import type { ChatRequest, JsonObject, JsonValue, Message, Usage } from './types.js';
import { mergeSameRole, type StreamTranslator, trimSlash, type Wire } from './wire.js';

/**
 * Gemini: `POST {base}/v1beta/models/{model}:generateContent` (`:streamGenerateContent?alt=sse`
 * when streaming). A function call's `id`, when Gemini sends one (Gemini 3 does), is sent back
 * with the call and with its `functionResponse`; a call without one gets `gemini_<i>`, never sent.
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
  if (request.topP !== undefined) config.topP = request.topP;
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
            ...givenId(result.callId),
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
    const part: JsonObject = { functionCall: { ...givenId(call.id), name: call.name, args: call.arguments } };
    if (call.signature !== undefined) part.thoughtSignature = call.signature;
    parts.push(part);
  }
  return parts.length === 0 ? [] : [{ role: 'model', parts }];
}

/** The ids axe makes up for calls Gemini sent without one. */
const MADE_UP_ID = /^gemini_\d+$/;

/**
 * The `id` field of a call and of its result: the id Gemini gave the call, which it matches the
 * result to; none for a made-up one (Gemini then matches by name and order).
 */
function givenId(id: string): JsonObject {
  return MADE_UP_ID.test(id) ? {} : { id };
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

/**
 * Finish reasons (the SDK's `FinishReason`) after which a candidate holds no usable answer, and
 * what each means. A failed tool call leaves none unless some call did come whole (text before it
 * was only its lead-in); `LANGUAGE` and `OTHER` leave none when nothing came. Refusals and safety
 * blocks (`SAFETY`, `RECITATION`, …) are not here: the sender marks them, and a refused run with
 * no answer fails in the runner. The failure is a WireError, as for any response the wire cannot
 * use: a server error, retried (the model may well make the call right the next time) unless a
 * stream had already delivered part of the answer.
 */
const FAILED_TOOL_CALL = new Map([
  ['MALFORMED_FUNCTION_CALL', "the model's function call was malformed"],
  ['UNEXPECTED_TOOL_CALL', "the model's tool call was invalid"],
  ['TOO_MANY_TOOL_CALLS', 'the model called too many tools in a row'],
]);
const NO_ANSWER = new Map([
  ['LANGUAGE', 'the model stopped: the language is not supported'],
  ['OTHER', 'the model stopped for an unspecified reason'],
]);
/** A finishMessage can quote the whole malformed call: it is cut to this many characters. */
const MAX_FINISH_MESSAGE = 300;

/** What the answer carried so far (over the chunks of a stream). */
interface Carried {
  toolCalls: number;
  text: boolean;
  /** The prompt's block was said (a stream can repeat its promptFeedback). */
  blocked?: boolean;
}

function throwIfNoAnswer(candidate: JsonObject, reason: string, carried: Carried): void {
  if (carried.toolCalls > 0) return;
  const what = FAILED_TOOL_CALL.get(reason) ?? (carried.text ? undefined : NO_ANSWER.get(reason));
  if (what === undefined) return;
  // Masked before it is cut: no part of a key the model wrote into the call is left.
  const message = oneLine(maskSecrets(optString(candidate.finishMessage) ?? ''));
  const cut =
    message.length > MAX_FINISH_MESSAGE ? `${wholeCharsPrefix(message, MAX_FINISH_MESSAGE)}…` : message;
  throw new WireError(`${what} (finishReason ${reason}${cut === '' ? '' : `: ${cut}`})`);
}

/** Feeds one GenerateContentResponse (a whole response, or one chunk of a stream) to the builder. */
function addChunk(builder: ResponseBuilder, chunk: JsonObject, carried: Carried): void {
  throwIfError(chunk);
  builder.setModel(optString(chunk.modelVersion) ?? '');
  const metadata = optObject(chunk.usageMetadata);
  if (metadata !== undefined) builder.setUsage(usageFromWire(metadata));
  const candidate = optObject(optArray(chunk.candidates)[0]);
  for (const part of optArray(optObject(candidate?.content)?.parts).filter(isObject)) {
    const call = optObject(part.functionCall);
    if (call !== undefined) {
      const index = carried.toolCalls;
      const given = optString(call.id);
      const args = JSON.stringify(call.args ?? {});
      builder.addWholeToolCall(
        index,
        given === undefined || given === '' ? `gemini_${index}` : given,
        optString(call.name) ?? '',
        args,
        optString(part.thoughtSignature),
      );
      carried.toolCalls += 1;
    } else if (part.thought !== true) {
      const text = optString(part.text) ?? '';
      if (text.trim() !== '') carried.text = true;
      builder.addText(text);
    }
  }
  const reason = optString(candidate?.finishReason);
  if (candidate !== undefined && reason !== undefined) throwIfNoAnswer(candidate, reason, carried);
  const blocked = promptBlock(chunk);
  if (blocked !== undefined && !carried.blocked) {
    // A blocked prompt has no candidate at all: whatever the reason (`SAFETY`, `MODEL_ARMOR`,
    // `OTHER`, …), it is a block, said with Gemini's message when it gives one.
    carried.blocked = true;
    builder.addRefusal(
      blocked.message === undefined ? blocked.reason : `${blocked.reason}: ${blocked.message}`,
    );
  }
  const finish = reason ?? blocked?.reason;
  if (finish !== undefined) builder.setStopReason(finish);
}

/** `promptFeedback.blockReason` (and its `blockReasonMessage`) when the prompt was blocked. */
function promptBlock(chunk: JsonObject): { reason: string; message?: string } | undefined {
  const feedback = optObject(chunk.promptFeedback);
  const reason = optString(feedback?.blockReason);
  if (reason === undefined || reason === '' || reason === 'BLOCKED_REASON_UNSPECIFIED') return undefined;
  const message = oneLine(maskSecrets(optString(feedback?.blockReasonMessage) ?? ''));
  return message === '' ? { reason } : { reason, message };
}

export function fromWire(json: JsonValue): WireResponse {
  const builder = new ResponseBuilder('');
  addChunk(builder, objectAt(json, 'response body'), { toolCalls: 0, text: false });
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
  const carried: Carried = { toolCalls: 0, text: false };
  return {
    get complete() {
      return builder.stopped;
    },
    message({ data }) {
      addChunk(builder, objectAt(parseJson(data, 'stream event'), 'stream event'), carried);
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
