import type { Frame } from './frames.js';
import { splitDeltas } from './frames.js';
import { asArray, asString, isRecord, type JsonRecord, textOf } from './json.js';
import { argumentsText, servedModel, toolCallId, usageOf } from './reply.js';
import { validateResponses } from './responses-validate.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, Refusal, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** The OpenAI Responses API: POST /v1/responses, JSON or named SSE events. */
function errorJson(refusal: Refusal): JsonRecord {
  return {
    error: {
      message: refusal.message,
      type: refusal.status >= 500 ? 'server_error' : 'invalid_request_error',
      param: refusal.param ?? null,
      code: refusal.code ?? (refusal.status === 429 ? 'rate_limit_exceeded' : null),
    },
  };
}

/** Text of an input message: a string, or its `input_text` parts. */
function inputText(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .filter((part): part is JsonRecord => isRecord(part) && part.type === 'input_text')
    .map((part) => asString(part.text))
    .join('\n');
}

function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const items =
    typeof body.input === 'string'
      ? [{ role: 'user', content: body.input }]
      : asArray(body.input).filter(isRecord);
  const system = [
    asString(body.instructions),
    ...items.filter((i) => i.role === 'system' || i.role === 'developer').map((i) => textOf(i.content)),
  ].filter((text) => text !== '');
  const userTexts = items.filter((i) => i.role === 'user').map((i) => inputText(i.content));
  return {
    model: asString(body.model),
    stream: body.stream === true,
    system: system.join('\n'),
    lastUserText: userTexts.filter((t) => t !== '').at(-1) ?? '',
    toolNames: asArray(body.tools).map((t) => (isRecord(t) ? asString(t.name) : '')),
    toolResults: items
      .filter((i) => i.type === 'function_call_output')
      .map((i) => ({ callId: asString(i.call_id), content: asString(i.output) })),
  };
}

function usageJson(reply: ScriptedReply): JsonRecord {
  const usage = usageOf(reply);
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cacheRead, cache_write_tokens: usage.cacheWrite },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
}

function messageItem(request: RecordedRequest, text: string, status: string): JsonRecord {
  return {
    id: `msg_fake${String(request.index).padStart(6, '0')}`,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'completed' ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
  };
}

function callItems(reply: ScriptedReply, request: RecordedRequest): JsonRecord[] {
  return (reply.toolCalls ?? []).map((call, i) => ({
    id: `fc_fake${String(request.index).padStart(6, '0')}${i}`,
    type: 'function_call',
    status: 'completed',
    call_id: toolCallId('call_', request, call, i),
    name: call.name,
    arguments: argumentsText(call),
  }));
}

/** The Response object; `status` in_progress (with no output yet) at the start of a stream. */
function responseJson(reply: ScriptedReply, request: RecordedRequest, done: boolean): JsonRecord {
  const body = isRecord(request.body) ? request.body : {};
  const incomplete = reply.stopReason !== undefined && reply.stopReason !== 'completed';
  const output = [
    ...(reply.text !== undefined && reply.text !== '' ? [messageItem(request, reply.text, 'completed')] : []),
    ...callItems(reply, request),
  ];
  return {
    id: `resp_fake${String(request.index).padStart(6, '0')}`,
    object: 'response',
    created_at: Math.floor(request.receivedAt / 1000),
    status: !done ? 'in_progress' : incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: done && incomplete ? { reason: reply.stopReason } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: servedModel(reply, request),
    output: done ? output : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    ...(done ? { usage: usageJson(reply) } : {}),
    metadata: {},
  };
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  return responseJson(reply, request, true);
}

function renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering {
  const frames: Frame[] = [];
  const event = (type: string, fields: JsonRecord) =>
    frames.push({ kind: 'data', event: type, data: { type, sequence_number: frames.length, ...fields } });
  event('response.created', { response: responseJson(reply, request, false) });
  event('response.in_progress', { response: responseJson(reply, request, false) });
  let outputIndex = 0;
  const text = reply.text ?? '';
  if (text !== '') {
    const item = messageItem(request, text, 'in_progress');
    const ids = { item_id: item.id, output_index: outputIndex };
    event('response.output_item.added', { output_index: outputIndex, item });
    const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
    event('response.content_part.added', { ...ids, content_index: 0, part });
    for (const delta of splitDeltas(text)) {
      event('response.output_text.delta', { ...ids, content_index: 0, delta, logprobs: [] });
    }
    event('response.output_text.done', { ...ids, content_index: 0, text, logprobs: [] });
    event('response.content_part.done', { ...ids, content_index: 0, part: { ...part, text } });
    event('response.output_item.done', {
      output_index: outputIndex,
      item: messageItem(request, text, 'completed'),
    });
    outputIndex++;
  }
  for (const item of callItems(reply, request)) {
    const ids = { item_id: item.id, output_index: outputIndex };
    event('response.output_item.added', {
      output_index: outputIndex,
      item: { ...item, status: 'in_progress', arguments: '' },
    });
    for (const delta of splitDeltas(asString(item.arguments))) {
      event('response.function_call_arguments.delta', { ...ids, delta });
    }
    event('response.function_call_arguments.done', { ...ids, name: item.name, arguments: item.arguments });
    event('response.output_item.done', { output_index: outputIndex, item });
    outputIndex++;
  }
  const final = responseJson(reply, request, true);
  event(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
  return { framing: 'sse', frames };
}

export const responsesWire: WireFormat = {
  wire: 'responses',
  summarize,
  validate: validateResponses,
  requestIdHeader: 'x-request-id',
  errorResponse: (refusal) => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(errorJson(refusal)),
  }),
  renderJson,
  renderStream,
  streamError: (message) => ({
    kind: 'data',
    event: 'error',
    data: { type: 'error', code: 'server_error', message, param: null, sequence_number: 0 },
  }),
};
