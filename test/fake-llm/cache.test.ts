import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tokensOf } from './cache.js';
import { startFakeLlm } from './server.js';
import { at, post, postSignedConverse } from './test-client.js';
import type { FakeLlm } from './types.js';

/** The fake's prompt caches: explicit breakpoints (Anthropic, Bedrock), implicit prefixes (OpenAI, Gemini). */
let fake: FakeLlm;
let clock = 0;
beforeAll(async () => {
  fake = await startFakeLlm({ cache: { now: () => clock } });
});
afterAll(() => fake.close());
beforeEach(() => {
  fake.reset();
  clock = 1_000_000;
  fake.respond(() => ({ text: 'ok' }));
});

const ANTHROPIC = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
/** About 1,500 tokens: above Sonnet's minimum (1,024), below Opus 4.5's (4,096). */
const LONG = 'policy text '.repeat(500);
const EPHEMERAL = { type: 'ephemeral' };

function anthropic(messages: unknown[], options: { model?: string; mark?: 'system' | 'last' | 'both' } = {}) {
  const mark = options.mark ?? 'system';
  const marked = (content: string) =>
    mark === 'system' ? content : [{ type: 'text', text: content, cache_control: EPHEMERAL }];
  const system = [{ type: 'text', text: LONG, ...(mark === 'last' ? {} : { cache_control: EPHEMERAL }) }];
  const last = messages.length - 1;
  return post(
    `${fake.url}/v1/messages`,
    {
      model: options.model ?? 'claude-sonnet-4-5',
      max_tokens: 100,
      system,
      messages: messages.map((m, i) =>
        i === last
          ? { role: 'user', content: marked(String(m)) }
          : { role: i % 2 ? 'assistant' : 'user', content: String(m) },
      ),
    },
    ANTHROPIC,
  );
}

function usage(sent: { json: unknown }) {
  return at(sent.json, 'usage');
}

describe('Anthropic prompt cache', () => {
  it('writes a marked prefix once, then reads it; the prompt splits into uncached + read + written', async () => {
    const first = await anthropic(['Question one']);
    const written = Number(at(usage(first), 'cache_creation_input_tokens'));
    expect(written).toBeGreaterThanOrEqual(tokensOf(JSON.stringify({ type: 'text', text: LONG })));
    expect(usage(first)).toMatchObject({ cache_read_input_tokens: 0 });
    const second = await anthropic(['Question two']);
    expect(usage(second)).toMatchObject({ cache_read_input_tokens: written, cache_creation_input_tokens: 0 });
    const cache = fake.requests[1]?.cache;
    expect(cache).toEqual({
      read: written,
      write: 0,
      uncached: Number(at(usage(second), 'input_tokens')),
    });
  });

  it('caches nothing below the model minimum (Opus 4.5: 4,096 tokens)', async () => {
    await anthropic(['a'], { model: 'claude-opus-4-5' });
    const second = await anthropic(['b'], { model: 'claude-opus-4-5' });
    expect(usage(second)).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
  });

  it('a moving breakpoint reads the previous turn through the 20-block lookback and writes only the new part', async () => {
    const turn1 = await anthropic(['Question'], { mark: 'last' });
    const total1 = Number(at(usage(turn1), 'cache_creation_input_tokens'));
    expect(total1).toBeGreaterThan(1024);
    const turn2 = await anthropic(['Question', 'Answer', 'Follow-up'], { mark: 'last' });
    expect(usage(turn2)).toMatchObject({ cache_read_input_tokens: total1 });
    expect(Number(at(usage(turn2), 'cache_creation_input_tokens'))).toBeGreaterThan(0);
    expect(Number(at(usage(turn2), 'input_tokens'))).toBe(0);
  });

  it('an entry lives 5 minutes from its last read', async () => {
    await anthropic(['a']);
    clock += 4 * 60_000;
    expect(usage(await anthropic(['b']))).toMatchObject({ cache_creation_input_tokens: 0 });
    clock += 4 * 60_000;
    expect(usage(await anthropic(['c']))).toMatchObject({ cache_creation_input_tokens: 0 });
    clock += 5 * 60_000 + 1;
    expect(Number(at(usage(await anthropic(['d'])), 'cache_creation_input_tokens'))).toBeGreaterThan(0);
  });

  it('another model does not read the entry', async () => {
    await anthropic(['a']);
    const other = await anthropic(['a'], { model: 'claude-sonnet-4-6' });
    expect(usage(other)).toMatchObject({ cache_read_input_tokens: 0 });
  });

  it('refuses a fifth breakpoint as Anthropic does', async () => {
    const text = { type: 'text', text: 'x', cache_control: EPHEMERAL };
    const sent = await post(
      `${fake.url}/v1/messages`,
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 10,
        system: [text, text, text],
        messages: [{ role: 'user', content: [text, text] }],
      },
      ANTHROPIC,
    );
    expect(sent.status).toBe(400);
    expect(at(sent.json, 'error', 'message')).toBe(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('scripted counts win over the cache', async () => {
    fake.respond(() => ({ text: 'ok', usage: { input: 7, cacheRead: 3, cacheWrite: 2 } }));
    expect(usage(await anthropic(['a']))).toMatchObject({
      input_tokens: 7,
      cache_read_input_tokens: 3,
      cache_creation_input_tokens: 2,
    });
  });
});

function bedrock(messages: string[]) {
  return postSignedConverse(fake.url, 'anthropic.claude-sonnet-4-5-v1:0', {
    system: [{ text: LONG }, { cachePoint: { type: 'default' } }],
    messages: messages.map((m, i) => ({ role: i % 2 ? 'assistant' : 'user', content: [{ text: m }] })),
  });
}

describe('Bedrock prompt cache', () => {
  it('a cachePoint after the system prompt: written once, read next', async () => {
    const first = await bedrock(['a']);
    const written = Number(at(first.json, 'usage', 'cacheWriteInputTokens'));
    expect(written).toBeGreaterThan(1024);
    const second = await bedrock(['b']);
    expect(at(second.json, 'usage', 'cacheReadInputTokens')).toBe(written);
    expect(at(second.json, 'usage', 'cacheWriteInputTokens')).toBeUndefined();
  });
});

const OPENAI = { authorization: 'Bearer sk-test' };

function openai(messages: string[], model = 'gpt-5') {
  return post(
    `${fake.url}/v1/chat/completions`,
    {
      model,
      messages: [
        { role: 'system', content: LONG },
        ...messages.map((m, i) => ({ role: i % 2 ? 'assistant' : 'user', content: m })),
      ],
    },
    OPENAI,
  );
}

describe('OpenAI automatic prefix cache', () => {
  it('reads the longest earlier prefix, from 1,024 tokens on, in 128-token steps; prompt_tokens includes it', async () => {
    const first = await openai(['a']);
    expect(at(first.json, 'usage', 'prompt_tokens_details', 'cached_tokens')).toBe(0);
    const second = await openai(['a', 'b', 'c']);
    const cached = Number(at(second.json, 'usage', 'prompt_tokens_details', 'cached_tokens'));
    const firstPrompt = Number(at(first.json, 'usage', 'prompt_tokens'));
    expect(cached).toBeGreaterThanOrEqual(1024);
    expect((cached - 1024) % 128).toBe(0);
    expect(cached).toBeLessThanOrEqual(firstPrompt);
    expect(firstPrompt - cached).toBeLessThan(128);
    expect(at(second.json, 'usage', 'prompt_tokens')).toBe(
      (fake.requests[1]?.cache?.uncached ?? Number.NaN) + cached,
    );
  });

  it('a changed byte early in the prompt reads nothing', async () => {
    await openai(['a']);
    const changed = await post(
      `${fake.url}/v1/chat/completions`,
      {
        model: 'gpt-5',
        messages: [
          { role: 'system', content: `${LONG}!` },
          { role: 'user', content: 'a' },
        ],
      },
      OPENAI,
    );
    expect(at(changed.json, 'usage', 'prompt_tokens_details', 'cached_tokens')).toBe(0);
  });

  it('a short prompt (under 1,024 tokens) is never cached', async () => {
    const short = () =>
      post(
        `${fake.url}/v1/chat/completions`,
        {
          model: 'gpt-5',
          messages: [{ role: 'user', content: 'hi' }],
        },
        OPENAI,
      );
    await short();
    expect(at((await short()).json, 'usage', 'prompt_tokens_details', 'cached_tokens')).toBe(0);
  });
});

describe('Gemini implicit cache', () => {
  it('reports cachedContentTokenCount for a repeated prefix, inside promptTokenCount', async () => {
    const send = (texts: string[]) =>
      post(
        `${fake.url}/v1beta/models/gemini-2.5-flash:generateContent`,
        {
          systemInstruction: { parts: [{ text: LONG }] },
          contents: texts.map((t, i) => ({ role: i % 2 ? 'model' : 'user', parts: [{ text: t }] })),
        },
        { 'x-goog-api-key': 'g-test' },
      );
    const first = await send(['a']);
    expect(at(first.json, 'usageMetadata', 'cachedContentTokenCount')).toBeUndefined();
    const second = await send(['a', 'b', 'c']);
    const cached = Number(at(second.json, 'usageMetadata', 'cachedContentTokenCount'));
    expect(cached).toBe(Number(at(first.json, 'usageMetadata', 'promptTokenCount')));
    expect(Number(at(second.json, 'usageMetadata', 'promptTokenCount'))).toBeGreaterThan(cached);
  });
});
