import { readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { ProviderError } from '../../internal/errors.js';
import { createHttpPool, type HttpPool, WIRES } from '../../internal/provider/index.js';
import { ResponseBuilder, type WireResponse } from '../../internal/provider/response-builder.js';
import { createStreamReader } from '../../internal/provider/stream.js';
import type {
  ChatOptions,
  ChatRequest,
  Provider,
  ProviderSettings,
  RetryPolicy,
  StreamEvent,
  ToolSpec,
  WireApi,
} from '../../internal/provider/types.js';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../fake-llm/bedrock-validate.js';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm } from '../fake-llm/types.js';

/** A fake LLM server and an HTTP pool shared by the tests of one file, closed after them. */
export async function fakeLlmAndPool(): Promise<{ fake: FakeLlm; pool: HttpPool }> {
  const fake = await startFakeLlm();
  const pool = createHttpPool();
  afterAll(async () => {
    await pool.close();
    await fake.close();
  });
  return { fake, pool };
}

export const FAST_RETRY: RetryPolicy = {
  maxRetries: 2,
  backoff: 'fixed',
  initialDelayMs: 2,
  maxDelayMs: 200,
};

export interface ChatFailure {
  error: ProviderError;
  events: StreamEvent[];
  ms: number;
}

/** Runs a chat that must fail with a ProviderError of one line that does not show the key. */
export async function chatFailure(
  provider: Provider,
  request: ChatRequest,
  options: Partial<ChatOptions> = {},
): Promise<ChatFailure> {
  const events: StreamEvent[] = [];
  const started = Date.now();
  try {
    await provider.chat(request, {
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e),
      ...options,
    });
  } catch (error) {
    if (!(error instanceof ProviderError)) throw error;
    expect(error.message).not.toContain(API_KEY);
    expect(error.message).not.toContain('\n');
    return { error, events, ms: Date.now() - started };
  }
  throw new Error('chat did not fail');
}

export function fixture(name: string): Buffer {
  return readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
}

/** Runs recorded stream bytes, cut into `chunks`, through the same reader the sender uses. */
export function decodeChunks(
  api: WireApi,
  chunks: Uint8Array[],
): { response: WireResponse; events: StreamEvent[] } {
  const events: StreamEvent[] = [];
  const reader = createStreamReader(
    WIRES[api],
    new ResponseBuilder('requested-model', (e) => events.push(e)),
  );
  for (const chunk of chunks) reader.push(chunk);
  return { response: reader.end(), events };
}

/** Cuts `bytes` at the given offsets (any order, duplicates ignored). */
export function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets)].filter((o) => o > 0 && o < bytes.length).sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const point of points) {
    chunks.push(bytes.subarray(start, point));
    start = point;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

const WEATHER_TOOL: ToolSpec = {
  name: 'get_weather',
  description: 'Weather forecast for a city',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city'],
  },
};

const TIME_TOOL: ToolSpec = {
  name: 'get_time',
  description: 'Current time in a time zone',
  parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
};

/** A conversation after one tool turn: two calls in one assistant message, one failed result. */
export function conversation(stream: boolean, overrides: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: 'test-model',
    system: 'You are a careful assistant.',
    messages: [
      { role: 'user', content: 'Weather in Paris and the time in Tokyo?' },
      {
        role: 'assistant',
        content: 'Let me check both.',
        toolCalls: [
          { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris', days: 2 } },
          { id: 'call_2', name: 'get_time', arguments: { zone: 'Asia/Tokyo' } },
        ],
      },
      {
        role: 'tool',
        results: [
          { callId: 'call_1', name: 'get_weather', content: 'Sunny, 21°C', isError: false },
          { callId: 'call_2', name: 'get_time', content: 'error: time service unavailable', isError: true },
        ],
      },
    ],
    tools: [WEATHER_TOOL, TIME_TOOL],
    stream,
    ...overrides,
  };
}

/** The same conversation offering no tools. */
export const noTools = (stream = false): ChatRequest => conversation(stream, { tools: [] });

export const API_KEY = 'sk-test-secret-key-0123456789';

/** Settings pointing a provider of wire `api` at the fake server (OpenAI bases include `/v1`). */
export function settingsFor(
  api: WireApi,
  url: string,
  overrides: Partial<ProviderSettings> = {},
): ProviderSettings {
  return {
    name: api === 'openai' ? 'openrouter' : api,
    api,
    baseUrl: api === 'openai' || api === 'responses' ? `${url}/v1` : url,
    apiKey: API_KEY,
    apiKeyEnv: `${api.toUpperCase()}_API_KEY`,
    apiKeyRequired: api !== 'ollama' && api !== 'bedrock',
    headers: {},
    ...(api === 'bedrock' ? { aws: FAKE_AWS } : {}),
    ...overrides,
  };
}

/** Bedrock signs with the credentials the fake server verifies. */
const FAKE_AWS: NonNullable<ProviderSettings['aws']> = {
  region: 'us-east-1',
  credentials: {
    kind: 'env',
    credentials: { accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY },
  },
};

export const APIS: WireApi[] = ['anthropic', 'openai', 'ollama', 'google', 'responses', 'bedrock'];

/** Natural stop reasons of each wire for a tool turn and a final answer. */
export const STOP_REASONS: Record<WireApi, { tools: string; final: string }> = {
  anthropic: { tools: 'tool_use', final: 'end_turn' },
  openai: { tools: 'tool_calls', final: 'stop' },
  ollama: { tools: 'stop', final: 'stop' },
  google: { tools: 'STOP', final: 'STOP' },
  responses: { tools: 'completed', final: 'completed' },
  bedrock: { tools: 'tool_use', final: 'end_turn' },
};
