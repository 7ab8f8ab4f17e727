import type { Frame } from './frames.js';
import { splitDeltas } from './frames.js';
import { asArray, asString, isRecord, type JsonRecord } from './json.js';
import { validateOllama } from './ollama-validate.js';
import { argumentsValue, servedModel, usageOf } from './reply.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** Ollama: POST /api/chat. Streams NDJSON unless the body says `stream: false`. */
function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const messages = asArray(body.messages).filter(isRecord);
  return {
    model: asString(body.model),
    stream: body.stream !== false,
    system: messages
      .filter((m) => m.role === 'system')
      .map((m) => asString(m.content))
      .join('\n'),
    lastUserText:
      messages
        .filter((m) => m.role === 'user')
        .map((m) => asString(m.content))
        .filter((t) => t !== '')
        .at(-1) ?? '',
    toolNames: asArray(body.tools).map((t) =>
      isRecord(t) && isRecord(t.function) ? asString(t.function.name) : '',
    ),
    toolResults: messages
      .filter((m) => m.role === 'tool')
      .map((m) => ({
        ...(typeof m.tool_name === 'string' ? { name: m.tool_name } : {}),
        content: asString(m.content),
      })),
  };
}

function toolCalls(reply: ScriptedReply): JsonRecord[] {
  return (reply.toolCalls ?? []).map((call, index) => ({
    function: { index, name: call.name, arguments: argumentsValue(call) },
  }));
}

function base(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  return { model: servedModel(reply, request), created_at: new Date(request.receivedAt).toISOString() };
}

function finalFields(reply: ScriptedReply): JsonRecord {
  const usage = usageOf(reply);
  return {
    done_reason: reply.stopReason ?? 'stop',
    done: true,
    total_duration: 1_000_000,
    load_duration: 100_000,
    prompt_eval_count: usage.input,
    prompt_eval_duration: 200_000,
    eval_count: usage.output,
    eval_duration: 700_000,
  };
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  const message: JsonRecord = { role: 'assistant', content: reply.text ?? '' };
  const calls = toolCalls(reply);
  if (calls.length > 0) message.tool_calls = calls;
  return { ...base(reply, request), message, ...finalFields(reply) };
}

function renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering {
  const line = (message: JsonRecord, last = false): Frame => ({
    kind: 'data',
    data: {
      ...base(reply, request),
      message: { role: 'assistant', ...message },
      ...(last ? finalFields(reply) : { done: false }),
    },
  });
  const frames = splitDeltas(reply.text ?? '').map((content) => line({ content }));
  const calls = toolCalls(reply);
  if (calls.length > 0) frames.push(line({ content: '', tool_calls: calls }));
  frames.push(line({ content: '' }, true));
  return { framing: 'ndjson', frames };
}

export const ollamaWire: WireFormat = {
  wire: 'ollama',
  summarize,
  validate: validateOllama,
  errorResponse: (refusal) => ({
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify({ error: refusal.message }),
  }),
  renderJson,
  renderStream,
  streamError: (message) => ({ kind: 'data', data: { error: message } }),
};
