import { validateBedrock } from './bedrock-validate.js';
import { asArray, asString, isRecord, type JsonRecord } from './json.js';
import { argumentsValue, toolCallId, usageOf } from './reply.js';
import type { RecordedRequest, ScriptedReply } from './types.js';
import type { IncomingRequest, Refusal, RequestSummary, StreamRendering, WireFormat } from './wire.js';

/** AWS Bedrock's Converse API: POST /model/{modelId}/converse, SigV4-signed, JSON only. */
const ERROR_TYPES: Record<number, string> = {
  400: 'ValidationException',
  401: 'UnrecognizedClientException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  413: 'ValidationException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
};

function errorType(refusal: Refusal): string {
  return (
    refusal.code ??
    ERROR_TYPES[refusal.status] ??
    (refusal.status >= 500 ? 'InternalServerException' : 'ValidationException')
  );
}

function textBlocks(content: unknown): string {
  return asArray(content)
    .filter(isRecord)
    .map((block) => asString(block.text))
    .filter((text) => text !== '')
    .join('\n');
}

function summarize(request: IncomingRequest): RequestSummary {
  const body = isRecord(request.body) ? request.body : {};
  const messages = asArray(body.messages).filter(isRecord);
  const userTexts = messages.filter((m) => m.role === 'user').map((m) => textBlocks(m.content));
  const toolConfig = isRecord(body.toolConfig) ? body.toolConfig : {};
  return {
    model: request.pathModel ?? '',
    stream: false,
    system: textBlocks(body.system),
    lastUserText: userTexts.filter((t) => t !== '').at(-1) ?? '',
    toolNames: asArray(toolConfig.tools).map((t) =>
      isRecord(t) && isRecord(t.toolSpec) ? asString(t.toolSpec.name) : '',
    ),
    toolResults: messages.flatMap((m) =>
      asArray(m.content)
        .filter((b): b is JsonRecord => isRecord(b) && isRecord(b.toolResult))
        .map((b) => {
          const result = b.toolResult as JsonRecord;
          return {
            callId: asString(result.toolUseId),
            content: textBlocks(result.content),
            isError: result.status === 'error',
          };
        }),
    ),
  };
}

function renderJson(reply: ScriptedReply, request: RecordedRequest): JsonRecord {
  const usage = usageOf(reply);
  const calls = reply.toolCalls ?? [];
  const content: JsonRecord[] = [];
  if (reply.text !== undefined && reply.text !== '') content.push({ text: reply.text });
  for (const [i, call] of calls.entries()) {
    content.push({
      toolUse: {
        toolUseId: toolCallId('tooluse_', request, call, i),
        name: call.name,
        input: argumentsValue(call),
      },
    });
  }
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: reply.stopReason ?? (calls.length > 0 ? 'tool_use' : 'end_turn'),
    usage: {
      inputTokens: usage.input,
      outputTokens: usage.output,
      totalTokens: usage.input + usage.output + usage.cacheRead + usage.cacheWrite,
      ...(usage.cacheRead > 0 ? { cacheReadInputTokens: usage.cacheRead } : {}),
      ...(usage.cacheWrite > 0 ? { cacheWriteInputTokens: usage.cacheWrite } : {}),
    },
    metrics: { latencyMs: 1 },
  };
}

function renderStream(): StreamRendering {
  throw new Error('fake-llm: ConverseStream (/converse-stream) is not served');
}

export const bedrockWire: WireFormat = {
  wire: 'bedrock',
  summarize,
  validate: validateBedrock,
  requestIdHeader: 'x-amzn-requestid',
  errorResponse: (refusal) => ({
    headers: {
      'content-type': 'application/json',
      'x-amzn-errortype': `${errorType(refusal)}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    },
    body: JSON.stringify({ message: refusal.message }),
  }),
  renderJson,
  renderStream,
  streamError: (message) => ({ kind: 'data', data: { message } }),
};
