import { describe, expect, it } from 'vitest';
import { createProvider } from '../../internal/provider/index.js';
import { DEFAULT_RETRY, type Message } from '../../internal/provider/types.js';
import type { ScriptedReply } from '../fake-llm/types.js';
import { conversation, fakeLlmAndPool, settingsFor } from './helpers.js';

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
