import { describe, expect, it } from 'vitest';
import * as google from '../../internal/provider/google.js';
import { createProvider } from '../../internal/provider/index.js';
import * as openai from '../../internal/provider/openai.js';
import * as responses from '../../internal/provider/responses.js';
import { DEFAULT_RETRY, type JsonObject, type Message } from '../../internal/provider/types.js';
import type { ScriptedReply } from '../fake-llm/types.js';
import { conversation, decodeChunks, fakeLlmAndPool, settingsFor } from './helpers.js';

/** Reasoning goes back with the turn it came with, as the APIs that check it require. */
const { fake, pool } = await fakeLlmAndPool();

const CALL = { name: 'get_weather', arguments: { city: 'Paris' } };

async function toolLoop(
  api: 'anthropic' | 'openai',
  model: string,
  stream: boolean,
  extra: object,
  replies: ScriptedReply[],
) {
  fake.reset();
  fake.enqueue(...replies);
  const provider = createProvider(settingsFor(api, fake.url), { retry: DEFAULT_RETRY, pool });
  const options = { signal: new AbortController().signal };
  const base = { ...conversation(stream), model, ...extra };
  const first = await provider.chat({ ...base, messages: base.messages.slice(0, 1) }, options);
  const history: Message[] = [
    base.messages[0] as Message,
    {
      role: 'assistant',
      content: first.content,
      toolCalls: first.toolCalls,
      ...(first.reasoning ? { reasoning: first.reasoning } : {}),
    },
    {
      role: 'tool',
      results: [
        { callId: first.toolCalls[0]?.id ?? '', name: 'get_weather', content: 'Sunny', isError: false },
      ],
    },
  ];
  const second = await provider.chat({ ...base, messages: history }, options);
  return { first, second };
}

describe('Anthropic thinking without max_tokens', () => {
  it('the default max_tokens stands above the thinking budget, as the API requires', async () => {
    fake.reset();
    fake.enqueue({ text: 'thought it through' });
    const provider = createProvider(settingsFor('anthropic', fake.url), { retry: DEFAULT_RETRY, pool });
    const base = conversation(false);
    const request = {
      ...base,
      messages: base.messages.slice(0, 1),
      model: 'claude-sonnet-4-5',
      thinkingBudget: 8000,
    };
    const answer = await provider.chat(request, { signal: new AbortController().signal });
    expect(answer.content).toBe('thought it through');
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]?.body).toMatchObject({
      max_tokens: 12096,
      thinking: { type: 'enabled', budget_tokens: 8000 },
    });
  });
});

describe('reasoning round trips', () => {
  for (const stream of [false, true]) {
    it(`Anthropic thinking blocks, with their signatures, lead the next request's assistant turn${stream ? ' (streamed)' : ''}`, async () => {
      const { first, second } = await toolLoop(
        'anthropic',
        'claude-sonnet-4-5',
        stream,
        { thinkingBudget: 2048, maxTokens: 8192 },
        [
          { thinking: { text: 'Check the weather tool.', signature: 'sig-EqQBCgIYAh' }, toolCalls: [CALL] },
          { text: 'Sunny in Paris.' },
        ],
      );
      expect(first.reasoning).toEqual([
        { type: 'thinking', text: 'Check the weather tool.', signature: 'sig-EqQBCgIYAh' },
      ]);
      expect(second.content).toBe('Sunny in Paris.');
      expect(fake.rejections).toEqual([]);
      const sent = fake.requests[1]?.body as {
        thinking: unknown;
        messages: { content: { type: string }[] }[];
      };
      expect(sent.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(sent.messages[1]?.content[0]).toEqual({
        type: 'thinking',
        thinking: 'Check the weather tool.',
        signature: 'sig-EqQBCgIYAh',
      });
    });

    it(`DeepSeek's reasoning_content comes back with the assistant's tool calls${stream ? ' (streamed)' : ''}`, async () => {
      const { first, second } = await toolLoop('openai', 'deepseek-reasoner', stream, {}, [
        { reasoning: 'The user wants weather.', toolCalls: [CALL] },
        { text: 'Sunny.' },
      ]);
      expect(first.reasoning).toEqual([{ type: 'thinking', text: 'The user wants weather.' }]);
      expect(second.content).toBe('Sunny.');
      expect(fake.rejections).toEqual([]);
      const sent = fake.requests[1]?.body as { messages: Record<string, unknown>[] };
      expect(sent.messages.find((m) => m.role === 'assistant')?.reasoning_content).toBe(
        'The user wants weather.',
      );
    });
  }

  it('the fake refuses what the real APIs refuse when reasoning is dropped', async () => {
    fake.reset();
    const provider = createProvider(settingsFor('openai', fake.url), {
      retry: { ...DEFAULT_RETRY, maxRetries: 0 },
      pool,
    });
    const base = conversation(false);
    const dropped: Message[] = [
      base.messages[0] as Message,
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'get_weather', arguments: {} }] },
      { role: 'tool', results: [{ callId: 'c1', name: 'get_weather', content: 'x', isError: false }] },
    ];
    await expect(
      provider.chat(
        { ...base, model: 'deepseek-reasoner', messages: dropped },
        { signal: new AbortController().signal },
      ),
    ).rejects.toThrow(/Missing `reasoning_content` field in the assistant message at message index 2/);
  });
});

describe('reasoning tokens count as output, wherever the server puts them', () => {
  const body = (usage: JsonObject) => ({
    id: 'x',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: '4' }, finish_reason: 'stop' }],
    usage,
  });

  it('OpenAI: inside completion_tokens (total = prompt + completion)', () => {
    const usage = openai.fromWire(
      body({
        prompt_tokens: 20,
        completion_tokens: 150,
        total_tokens: 170,
        completion_tokens_details: { reasoning_tokens: 128 },
      }),
    ).usage;
    expect(usage).toMatchObject({ inputTokens: 20, outputTokens: 150, reasoningTokens: 128 });
  });

  it("xAI and Gemini's OpenAI endpoint: beside completion_tokens (total = prompt + completion + reasoning)", () => {
    const usage = openai.fromWire(
      body({
        prompt_tokens: 20,
        completion_tokens: 22,
        total_tokens: 170,
        completion_tokens_details: { reasoning_tokens: 128 },
      }),
    ).usage;
    expect(usage).toMatchObject({ inputTokens: 20, outputTokens: 150, reasoningTokens: 128 });
  });

  it('Gemini thoughtsTokenCount and Responses reasoning_tokens are reported too', () => {
    const gemini = google.fromWire({
      candidates: [{ content: { role: 'model', parts: [{ text: '4' }] }, finishReason: 'STOP' }],
      usageMetadata: {
        promptTokenCount: 9,
        candidatesTokenCount: 3,
        thoughtsTokenCount: 40,
        totalTokenCount: 52,
      },
    }).usage;
    expect(gemini).toMatchObject({ outputTokens: 43, reasoningTokens: 40 });
    const answer = responses.fromWire({
      id: 'r',
      object: 'response',
      status: 'completed',
      model: 'gpt-5',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: '4' }] }],
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 97,
        output_tokens_details: { reasoning_tokens: 64 },
        total_tokens: 106,
      },
    }).usage;
    expect(answer).toMatchObject({ outputTokens: 97, reasoningTokens: 64 });
  });
});

/**
 * xAI's chat completions, streamed and not: the same usage object, read the same way. Its shape is
 * xAI's documented one ("Consumption and rate limits": reasoning_tokens counted beside
 * completion_tokens, total_tokens counting both; the streaming guide: running usage on every chunk),
 * with the usage-only last chunk `stream_options.include_usage` adds (BerriAI/litellm#17136), and
 * the cached tokens some models leave out of prompt_tokens (vercel/ai#12485). The bytes are ours.
 */
describe('xAI usage, streamed and not', () => {
  const chunk = (choices: JsonObject[], usage?: JsonObject): string =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'grok-3-mini', choices, ...(usage ? { usage } : {}) })}\n\n`;
  const delta = (fields: JsonObject, finish: string | null = null): JsonObject => ({
    index: 0,
    delta: fields,
    finish_reason: finish,
  });
  const running = (prompt: number, cached: number, completion: number, reasoning: number): JsonObject => ({
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + (cached > prompt ? cached : 0) + completion + reasoning,
    prompt_tokens_details: { text_tokens: prompt, audio_tokens: 0, image_tokens: 0, cached_tokens: cached },
    completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0 },
  });
  const both = (prompt: number, cached: number, completion: number, reasoning: number) => {
    const final = running(prompt, cached, completion, reasoning);
    const sse = [
      chunk(
        [delta({ role: 'assistant', reasoning_content: 'Two plus two' })],
        running(prompt, cached, 0, Math.min(1, reasoning)),
      ),
      chunk([delta({ reasoning_content: ' is four.' })], running(prompt, cached, 0, reasoning)),
      chunk([delta({ content: '4' })], running(prompt, cached, completion, reasoning)),
      chunk([delta({}, 'stop')], final),
      chunk([], final),
      'data: [DONE]\n\n',
    ].join('');
    const streamed = decodeChunks('openai', [new TextEncoder().encode(sse)]).response;
    const whole = openai.fromWire({
      id: 'c1',
      object: 'chat.completion',
      model: 'grok-3-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: '4' }, finish_reason: 'stop' }],
      usage: final,
    });
    expect(streamed.content).toBe('4');
    expect(streamed.usage).toEqual(whole.usage);
    return streamed.usage;
  };

  it("a reasoning reply: output is completion + reasoning, xAI's own total, in both modes", () => {
    expect(both(41, 0, 130, 196)).toEqual({
      inputTokens: 41,
      outputTokens: 326,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 196,
    });
  });

  it('cached tokens left out of prompt_tokens: the prompt is both, and they are not taken for reasoning', () => {
    expect(both(4142, 4328, 254, 0)).toMatchObject({
      inputTokens: 4142,
      outputTokens: 254,
      cacheReadTokens: 4328,
    });
    expect(both(4142, 4328, 130, 196)).toMatchObject({
      inputTokens: 4142,
      outputTokens: 326,
      cacheReadTokens: 4328,
    });
    // Reasoning inside completion_tokens (OpenAI's way) beside such a prompt: the cached tokens in
    // total_tokens are no room for a second count of the reasoning (326, not 522).
    const usage = openai.fromWire({
      id: 'c1',
      object: 'chat.completion',
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: '4' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 326,
        total_tokens: 826,
        prompt_tokens_details: { cached_tokens: 400 },
        completion_tokens_details: { reasoning_tokens: 196 },
      },
    }).usage;
    expect(usage).toMatchObject({ inputTokens: 100, outputTokens: 326, cacheReadTokens: 400 });
  });
});
