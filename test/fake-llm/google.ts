import type { Frame } from './frames.js';
import { splitDeltas } from './frames.js';
import { validateGoogle } from './google-validate.js';
import { asArray, asString, isRecord, type JsonRecord } from './json.js';
import { argumentsValue, servedModel, usageOf } from './reply.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** Gemini: POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse. */
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

function errorJson(status: number, message: string, retryDelay?: string): JsonRecord {
  const name = STATUS_NAMES[status] ?? (status >= 500 ? 'INTERNAL' : 'INVALID_ARGUMENT');
  const details =
    retryDelay === undefined
      ? {}
      : { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] };
  return { error: { code: status, message, status: name, ...details } };
}

function get(record: JsonRecord, camelName: string, snakeName: string): unknown {
  return record[camelName] ?? record[snakeName];
}

function partsOf(content: unknown): JsonRecord[] {
  return isRecord(content) ? asArray(content.parts).filter(isRecord) : [];
}

function textOf(content: unknown): string {
  return partsOf(content)
    .filter((p) => typeof p.text === 'string')
    .map((p) => asString(p.text))
    .join('');
}

/** A function response's payload as text: a lone string field as-is, anything else as JSON. */
function responseText(response: unknown): { content: string; isError: boolean } {
  if (!isRecord(response)) return { content: '', isError: false };
  const values = Object.values(response);
  const only = values.length === 1 ? values[0] : undefined;
  return {
    content: typeof only === 'string' ? only : JSON.stringify(response),
    isError: 'error' in response,
  };
}

function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const contents = asArray(body.contents).filter(isRecord);
  const declarations = asArray(body.tools)
    .filter(isRecord)
    .flatMap((t) => asArray(get(t, 'functionDeclarations', 'function_declarations')));
  const toolResults = contents.flatMap(partsOf).flatMap((part) => {
    const response = get(part, 'functionResponse', 'function_response');
    if (!isRecord(response)) return [];
    return [
      {
        ...(typeof response.id === 'string' ? { callId: response.id } : {}),
        name: asString(response.name),
        ...responseText(response.response),
      },
    ];
  });
  return {
    model: request.pathModel ?? '',
    stream: request.path.endsWith(':streamGenerateContent'),
    system: textOf(get(body, 'systemInstruction', 'system_instruction')),
    lastUserText:
      contents
        .filter((c) => (c.role ?? 'user') === 'user')
        .map(textOf)
        .filter((t) => t !== '')
        .at(-1) ?? '',
    toolNames: declarations.map((d) => asString(isRecord(d) ? d.name : undefined)),
    toolResults,
  };
}

function usageJson(reply: ScriptedReply): JsonRecord {
  const usage = usageOf(reply);
  return {
    promptTokenCount: usage.input,
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.output,
    ...(usage.cacheRead > 0 ? { cachedContentTokenCount: usage.cacheRead } : {}),
  };
}

function response(
  reply: ScriptedReply,
  request: RecordedRequest,
  parts: JsonRecord[],
  last: boolean,
): JsonRecord {
  const candidate: JsonRecord = { content: { parts, role: 'model' }, index: 0 };
  if (last) candidate.finishReason = reply.stopReason ?? 'STOP';
  return {
    candidates: [candidate],
    usageMetadata: last
      ? usageJson(reply)
      : { promptTokenCount: usageOf(reply).input, totalTokenCount: usageOf(reply).input },
    modelVersion: servedModel(reply, request),
    responseId: `fake${String(request.index).padStart(6, '0')}`,
  };
}

/** A call's `id` only when the script gives one: Gemini 3 sends ids, the models before it none. */
function callParts(reply: ScriptedReply): JsonRecord[] {
  return (reply.toolCalls ?? []).map((call) => ({
    functionCall: {
      ...(call.id === undefined ? {} : { id: call.id }),
      name: call.name,
      args: argumentsValue(call),
    },
  }));
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  const parts = [...(reply.text ? [{ text: reply.text }] : []), ...callParts(reply)];
  return response(reply, request, parts, true);
}

function renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering {
  const chunks: JsonRecord[][] = splitDeltas(reply.text ?? '').map((text) => [{ text }]);
  const calls = callParts(reply);
  if (calls.length > 0) chunks.push(calls);
  if (chunks.length === 0) chunks.push([{ text: '' }]);
  const frames: Frame[] = chunks.map((parts, i) => ({
    kind: 'data',
    data: response(reply, request, parts, i === chunks.length - 1),
  }));
  return { framing: 'sse-crlf', frames };
}

export const googleWire: WireFormat = {
  wire: 'google',
  summarize,
  validate: validateGoogle,
  errorResponse: (refusal) => ({
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: JSON.stringify(errorJson(refusal.status, refusal.message, refusal.retryDelay)),
  }),
  renderJson,
  renderStream,
  streamError: (message) => ({ kind: 'data', data: errorJson(500, message) }),
};
