import { validateAnthropic } from './anthropic-validate.js';
import { type Frame, splitDeltas } from './frames.js';
import { asArray, asString, isRecord, type JsonRecord, textOf } from './json.js';
import { argumentsText, argumentsValue, servedModel, toolCallId, usageOf } from './reply.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** Anthropic Messages API: POST /v1/messages. */
const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function errorType(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
}

function errorBody(type: string, message: string, requestId: string): JsonRecord {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const messages = asArray(body.messages).filter(isRecord);
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  const toolResults = messages
    .filter((m) => m.role === 'user')
    .flatMap((m) => asArray(m.content))
    .filter((b): b is JsonRecord => isRecord(b) && b.type === 'tool_result')
    .map((b) => ({
      callId: asString(b.tool_use_id),
      content: textOf(b.content),
      isError: b.is_error === true,
    }));
  return {
    model: asString(body.model),
    stream: body.stream === true,
    system: textOf(body.system),
    lastUserText: userTexts.filter((t) => t !== '').at(-1) ?? '',
    toolNames: asArray(body.tools).map((t) => asString(isRecord(t) ? t.name : undefined)),
    toolResults,
  };
}

function stopReason(reply: ScriptedReply): string {
  return reply.stopReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_use' : 'end_turn');
}

function messageId(request: RecordedRequest): string {
  return `msg_fake${String(request.index).padStart(6, '0')}`;
}

function usageJson(reply: ScriptedReply, outputTokens: number): JsonRecord {
  const usage = usageOf(reply);
  return {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    output_tokens: outputTokens,
  };
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  const content: JsonRecord[] = [];
  if (reply.thinking)
    content.push({ type: 'thinking', thinking: reply.thinking.text, signature: reply.thinking.signature });
  if (reply.text) content.push({ type: 'text', text: reply.text });
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    content.push({
      type: 'tool_use',
      id: toolCallId('toolu_', request, call, i),
      name: call.name,
      input: argumentsValue(call),
    });
  }
  return {
    id: messageId(request),
    type: 'message',
    role: 'assistant',
    model: servedModel(reply, request),
    content,
    stop_reason: stopReason(reply),
    stop_sequence: null,
    usage: { ...usageJson(reply, usageOf(reply).output), service_tier: 'standard' },
  };
}

function event(name: string, data: JsonRecord): Frame {
  return { kind: 'data', event: name, data: { type: name, ...data } };
}

function renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering {
  const frames: Frame[] = [
    event('message_start', {
      message: {
        id: messageId(request),
        type: 'message',
        role: 'assistant',
        model: servedModel(reply, request),
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageJson(reply, 1),
      },
    }),
    event('ping', {}),
  ];
  let index = 0;
  if (reply.thinking) {
    frames.push(
      event('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    );
    for (const thinking of splitDeltas(reply.thinking.text)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } }));
    }
    frames.push(
      event('content_block_delta', {
        index,
        delta: { type: 'signature_delta', signature: reply.thinking.signature },
      }),
    );
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.text) {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of splitDeltas(reply.text)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    }
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  for (const [i, call] of (reply.toolCalls ?? []).entries()) {
    const id = toolCallId('toolu_', request, call, i);
    frames.push(
      event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id, name: call.name, input: {} },
      }),
    );
    for (const partial_json of ['', ...splitDeltas(argumentsText(call))]) {
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } }));
    }
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  frames.push(
    event('message_delta', {
      delta: { stop_reason: stopReason(reply), stop_sequence: null },
      usage: { output_tokens: usageOf(reply).output },
    }),
    event('message_stop', {}),
  );
  return { framing: 'sse', frames };
}

export const anthropicWire: WireFormat = {
  wire: 'anthropic',
  summarize,
  validate: validateAnthropic,
  requestIdHeader: 'request-id',
  errorResponse: (refusal, requestId) => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(errorBody(errorType(refusal.status), refusal.message, requestId)),
  }),
  renderJson,
  renderStream,
  streamError: (message) => event('error', { error: { type: 'overloaded_error', message } }),
};
