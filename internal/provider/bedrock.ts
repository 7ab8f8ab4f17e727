import { ConfigError } from '../errors.js';
import { addSecret } from '../secrets.js';
import { loadAwsCredentials } from './aws-credentials.js';
import {
  type ErrorInfo,
  isObject,
  objectAt,
  optArray,
  optNumber,
  optObject,
  optString,
  WireError,
} from './json.js';
import { breakpointsOf } from './prompt-cache.js';
import { toolCallFrom, type WireResponse } from './response-builder.js';
import { signV4 } from './sigv4.js';
import {
  type ChatRequest,
  emptyUsage,
  type JsonObject,
  type JsonValue,
  type Message,
  type ProviderSettings,
  type ToolCall,
} from './types.js';
import { mergeSameRole, type SignableRequest, type StreamTranslator, trimSlash, type Wire } from './wire.js';

/**
 * AWS Bedrock's Converse API (Go axe's `bedrock`): `POST {base}/model/{modelId}/converse`, signed
 * with SigV4 (service `bedrock`). Not streamed: ConverseStream's binary event stream is not used,
 * so a streamed call gets its answer whole, as with Go axe.
 */
export function toWire(request: ChatRequest): JsonObject {
  // Converse takes cache points for Claude models only.
  const breakpoints = request.model.includes('anthropic.')
    ? breakpointsOf(request)
    : { system: false, newest: false };
  const messages = mergeSameRole(request.messages.map(messageToWire), 'content');
  const newest = messages.at(-1)?.content;
  if (breakpoints.newest && Array.isArray(newest)) newest.push({ cachePoint: CACHE_POINT });
  const body: JsonObject = { messages };
  if (request.system !== '') {
    body.system = breakpoints.system
      ? [{ text: request.system }, { cachePoint: CACHE_POINT }]
      : [{ text: request.system }];
  }
  const inference: JsonObject = {};
  if (request.maxTokens !== undefined) inference.maxTokens = request.maxTokens;
  if (request.temperature !== undefined) inference.temperature = request.temperature;
  if (request.topP !== undefined) inference.topP = request.topP;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.toolConfig = {
      tools: request.tools.map((tool) => ({
        toolSpec: { name: tool.name, description: tool.description, inputSchema: { json: tool.parameters } },
      })),
    };
  }
  return body;
}

const CACHE_POINT: JsonObject = { type: 'default' };

function messageToWire(message: Message): JsonObject {
  if (message.role === 'user') return { role: 'user', content: [{ text: message.content }] };
  if (message.role === 'tool') {
    return {
      role: 'user',
      content: message.results.map((result) => ({
        toolResult: {
          toolUseId: result.callId,
          content: [{ text: result.content }],
          status: result.isError ? 'error' : 'success',
        },
      })),
    };
  }
  // Converse refuses a blank text block: an assistant turn that only calls tools has none.
  const content: JsonObject[] = message.content === '' ? [] : [{ text: message.content }];
  for (const call of message.toolCalls ?? []) {
    content.push({ toolUse: { toolUseId: call.id, name: call.name, input: call.arguments } });
  }
  return { role: 'assistant', content };
}

export function fromWire(json: JsonValue): WireResponse {
  const body = objectAt(json, 'response body');
  const message = optObject(optObject(body.output)?.message);
  if (message === undefined) {
    throw new WireError(optString(body.message) ?? 'unexpected response: no output.message');
  }
  let content = '';
  const toolCalls: ToolCall[] = [];
  for (const block of optArray(message.content).filter(isObject)) {
    const text = optString(block.text);
    if (text !== undefined) content += text;
    const use = optObject(block.toolUse);
    if (use !== undefined) {
      toolCalls.push(
        toolCallFrom(
          optString(use.toolUseId) ?? '',
          optString(use.name) ?? '',
          JSON.stringify(use.input ?? {}),
        ),
      );
    }
  }
  const usage = optObject(body.usage);
  return {
    content,
    toolCalls,
    stopReason: optString(body.stopReason) ?? '',
    usage: {
      ...emptyUsage(),
      inputTokens: optNumber(usage?.inputTokens) ?? 0,
      outputTokens: optNumber(usage?.outputTokens) ?? 0,
      cacheReadTokens: optNumber(usage?.cacheReadInputTokens) ?? 0,
      cacheWriteTokens: optNumber(usage?.cacheWriteInputTokens) ?? 0,
    },
    model: '',
  };
}

/** AWS JSON errors: `{"message": …}` (sometimes `Message`), the type in `__type` when present. */
function errorInfo(json: JsonValue): ErrorInfo {
  if (!isObject(json)) return {};
  const info: ErrorInfo = {};
  const message = optString(json.message) ?? optString(json.Message);
  const type = optString(json.__type)?.split('#').at(-1);
  if (message !== undefined) info.message = message;
  if (type !== undefined) info.type = type;
  return info;
}

/** Never called: the wire does not stream (streamFormat `none`). */
function createStream(): StreamTranslator {
  throw new WireError('bedrock: ConverseStream is not used');
}

async function sign(request: SignableRequest, settings: ProviderSettings): Promise<Record<string, string>> {
  const region = settings.aws?.region;
  if (!region) {
    throw new ConfigError(
      `region for provider "${settings.name}" is not configured (set AWS_REGION or add to config.toml)`,
    );
  }
  if (!settings.aws) throw new ConfigError(`provider "${settings.name}" has no AWS credentials`);
  const credentials = await loadAwsCredentials(settings.aws.credentials);
  addSecret(credentials.secretAccessKey);
  addSecret(credentials.sessionToken);
  return signV4({
    method: 'POST',
    url: request.url,
    headers: { 'content-type': 'application/json' },
    body: request.body,
    region,
    service: 'bedrock',
    credentials,
    date: new Date(),
  });
}

export const bedrockWire: Wire = {
  streamFormat: 'none',
  url: (baseUrl, request) => `${trimSlash(baseUrl)}/model/${encodeURIComponent(request.model)}/converse`,
  authHeaders: () => ({}),
  toWire,
  fromWire,
  createStream,
  errorInfo,
  sign,
};
