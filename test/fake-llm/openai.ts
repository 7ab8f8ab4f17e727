import type { Frame } from './frames.js';
import { splitDeltas } from './frames.js';
import { asArray, asString, isRecord, type JsonRecord, textOf } from './json.js';
import { validateOpenAi } from './openai-validate.js';
import { argumentsText, servedModel, toolCallId, usageOf } from './reply.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, Refusal, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** OpenAI Chat Completions (and OpenAI-compatible servers such as OpenRouter): POST /v1/chat/completions. */
function errorType(status: number): string {
  if (status === 429) return 'requests';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

function defaultCode(status: number): string | null {
  if (status === 401) return 'invalid_api_key';
  if (status === 429) return 'rate_limit_exceeded';
  return null;
}

function errorJson(refusal: Refusal): JsonRecord {
  return {
    error: {
      message: refusal.message,
      type: errorType(refusal.status),
      param: refusal.param ?? null,
      code: refusal.code ?? defaultCode(refusal.status),
    },
  };
}

function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const messages = asArray(body.messages).filter(isRecord);
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => textOf(m.content));
  return {
    model: asString(body.model),
    stream: body.stream === true,
    system: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => textOf(m.content))
      .join('\n'),
    lastUserText: userTexts.filter((t) => t !== '').at(-1) ?? '',
    toolNames: asArray(body.tools).map((t) =>
      isRecord(t) && isRecord(t.function) ? asString(t.function.name) : '',
    ),
    toolResults: messages
      .filter((m) => m.role === 'tool')
      .map((m) => ({ callId: asString(m.tool_call_id), content: textOf(m.content) })),
  };
}

function finishReason(reply: ScriptedReply): string {
  return reply.stopReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_calls' : 'stop');
}

function usageJson(reply: ScriptedReply): JsonRecord {
  const usage = usageOf(reply);
  const completion = usage.reasoningBeside ? usage.output - usage.reasoning : usage.output;
  return {
    prompt_tokens: usage.input,
    completion_tokens: completion,
    total_tokens: usage.input + usage.output,
    prompt_tokens_details: { cached_tokens: usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning, audio_tokens: 0 },
    ...(usage.cost === undefined ? {} : { cost: usage.cost }),
  };
}

function envelope(request: RecordedRequest, reply: ScriptedReply, object: string): JsonRecord {
  return {
    id: `chatcmpl-fake${String(request.index).padStart(6, '0')}`,
    object,
    created: Math.floor(request.receivedAt / 1000),
    model: servedModel(reply, request),
    system_fingerprint: 'fp_fake',
  };
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  const calls = (reply.toolCalls ?? []).map((call, i) => ({
    id: toolCallId('call_', request, call, i),
    type: 'function',
    function: { name: call.name, arguments: argumentsText(call) },
  }));
  const message: JsonRecord = {
    role: 'assistant',
    content: reply.text ?? null,
    refusal: reply.refusal ?? null,
    ...(reply.reasoning === undefined ? {} : { reasoning_content: reply.reasoning }),
    annotations: [],
  };
  if (calls.length > 0) message.tool_calls = calls;
  return {
    ...envelope(request, reply, 'chat.completion'),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(reply) }],
    usage: usageJson(reply),
    service_tier: 'default',
  };
}

function includeUsage(request: RecordedRequest): boolean {
  const body = isRecord(request.body) ? request.body : {};
  return isRecord(body.stream_options) && body.stream_options.include_usage === true;
}

function renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering {
  const withUsage = includeUsage(request);
  const chunk = (delta: JsonRecord, finish: string | null = null): Frame => ({
    kind: 'data',
    data: {
      ...envelope(request, reply, 'chat.completion.chunk'),
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
      ...(withUsage ? { usage: null } : {}),
    },
  });
  const frames: Frame[] = [
    { kind: 'comment', text: 'OPENROUTER PROCESSING' },
    chunk({ role: 'assistant', content: '', refusal: null }),
  ];
  for (const reasoning of splitDeltas(reply.reasoning ?? ''))
    frames.push(chunk({ reasoning_content: reasoning }));
  for (const content of splitDeltas(reply.text ?? '')) frames.push(chunk({ content }));
  for (const refusal of splitDeltas(reply.refusal ?? '')) frames.push(chunk({ refusal }));
  for (const [index, call] of (reply.toolCalls ?? []).entries()) {
    const id = toolCallId('call_', request, call, index);
    frames.push(
      chunk({ tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }),
    );
    for (const piece of splitDeltas(argumentsText(call))) {
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  frames.push(chunk({}, finishReason(reply)));
  if (withUsage) {
    frames.push({
      kind: 'data',
      data: { ...envelope(request, reply, 'chat.completion.chunk'), choices: [], usage: usageJson(reply) },
    });
  }
  frames.push({ kind: 'raw', text: '[DONE]' });
  return { framing: 'sse', frames };
}

export const openAiWire: WireFormat = {
  wire: 'openai',
  summarize,
  validate: validateOpenAi,
  requestIdHeader: 'x-request-id',
  errorResponse: (refusal) => ({
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(errorJson(refusal)),
  }),
  renderJson,
  renderStream,
  streamError: (message) => ({ kind: 'data', data: errorJson({ status: 500, message }) }),
};
