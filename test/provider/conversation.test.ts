import { describe, expect, it } from 'vitest';
import { createProvider } from '../../internal/provider/index.js';
import { DEFAULT_RETRY, type Message, type StreamEvent } from '../../internal/provider/types.js';
import { API_KEY, APIS, conversation, fakeLlmAndPool, STOP_REASONS, settingsFor } from './helpers.js';

const { fake, pool } = await fakeLlmAndPool();

describe.each(APIS)('%s: a full tool conversation passes the fake server validation', (api) => {
  for (const stream of [false, true]) {
    it(stream ? 'streamed' : 'not streamed', async () => {
      fake.reset();
      const provider = createProvider(settingsFor(api, fake.url), { retry: DEFAULT_RETRY, pool });
      fake.enqueue(
        {
          text: 'Let me check both.',
          toolCalls: [
            { name: 'get_weather', arguments: { city: 'Paris', days: 2, detail: { wind: true } } },
            { name: 'get_time', arguments: { zone: 'Asia/Tokyo' } },
          ],
          usage: { input: 120, output: 30, cacheRead: api === 'anthropic' ? 50 : 0, cacheWrite: 0 },
        },
        { text: 'Paris is sunny; the time service failed.', usage: { input: 200, output: 12 } },
      );
      const events: StreamEvent[] = [];
      const options = { signal: new AbortController().signal, onEvent: (e: StreamEvent) => events.push(e) };
      const base = conversation(stream);
      const first = await provider.chat({ ...base, messages: base.messages.slice(0, 1) }, options);

      expect(first.content).toBe('Let me check both.');
      expect(first.toolCalls.map(({ name, arguments: args }) => ({ name, args }))).toEqual([
        { name: 'get_weather', args: { city: 'Paris', days: 2, detail: { wind: true } } },
        { name: 'get_time', args: { zone: 'Asia/Tokyo' } },
      ]);
      expect(new Set(first.toolCalls.map((c) => c.id)).size).toBe(2);
      expect(first.stopReason).toBe(STOP_REASONS[api].tools);
      expect(first.usage).toMatchObject({ inputTokens: 120, outputTokens: 30 });
      if (api === 'anthropic') expect(first.usage.cacheReadTokens).toBe(50);
      expect(first.retries).toBe(0);
      expect(first.model).toBe('test-model');
      if (api !== 'ollama' && api !== 'google') expect(first.requestId).toMatch(/^req_fake/);

      if (stream) {
        const text = events.flatMap((e) => (e.type === 'text.delta' ? [e.text] : [])).join('');
        expect(text).toBe('Let me check both.');
        expect(events.filter((e) => e.type === 'toolcall.start')).toHaveLength(2);
        expect(events.filter((e) => e.type === 'toolcall.end')).toHaveLength(2);
        expect(events.at(-1)).toEqual({ type: 'done', stopReason: STOP_REASONS[api].tools });
      } else {
        expect(events).toEqual([]);
      }

      const [call1, call2] = first.toolCalls;
      const history: Message[] = [
        base.messages[0] as Message,
        { role: 'assistant', content: first.content, toolCalls: first.toolCalls },
        {
          role: 'tool',
          results: [
            { callId: call1?.id ?? '', name: 'get_weather', content: 'Sunny, 21°C', isError: false },
            { callId: call2?.id ?? '', name: 'get_time', content: 'time service unavailable', isError: true },
          ],
        },
      ];
      const final = await provider.chat({ ...base, messages: history }, options);
      expect(final.content).toBe('Paris is sunny; the time service failed.');
      expect(final.toolCalls).toEqual([]);
      expect(final.stopReason).toBe(STOP_REASONS[api].final);
      expect(final.usage).toMatchObject({ inputTokens: 200, outputTokens: 12 });

      expect(fake.rejections.map((r) => r.rejection)).toEqual([]);
      const second = fake.requests[1];
      expect(second?.toolResults.map((r) => r.content)).toEqual(['Sunny, 21°C', 'time service unavailable']);
      // OpenAI and Ollama tool messages have no error flag: the content says it.
      if (api === 'anthropic' || api === 'google' || api === 'bedrock') {
        expect(second?.toolResults.map((r) => r.isError)).toEqual([false, true]);
      }
      expect(second?.toolNames).toEqual(['get_weather', 'get_time']);
      expect(second?.system).toBe('You are a careful assistant.');
      // Bedrock's Converse is not streamed: a streamed call is sent whole and its events replayed.
      expect(second?.stream).toBe(stream && api !== 'bedrock');
      const sent = JSON.stringify(second?.body);
      expect(sent).not.toContain(API_KEY);
    });
  }
});

describe('request details', () => {
  it('sends an explicit temperature 0 and no tools key without tools', async () => {
    fake.reset();
    for (const api of APIS) {
      const provider = createProvider(settingsFor(api, fake.url), { retry: DEFAULT_RETRY, pool });
      fake.enqueue({ text: 'ok' });
      const reply = await provider.chat(
        { ...conversation(false), messages: [{ role: 'user', content: 'hi' }], tools: [], temperature: 0 },
        { signal: new AbortController().signal },
      );
      expect(reply.content).toBe('ok');
    }
    expect(fake.rejections.map((r) => r.rejection)).toEqual([]);
    for (const request of fake.requests) {
      expect(request.toolNames).toEqual([]);
      expect(JSON.stringify(request.body)).toMatch(/"temperature":0[,}]/);
    }
  });

  it('OpenRouter cost and attribution headers; unparseable arguments become argumentsError', async () => {
    fake.reset();
    const settings = settingsFor('openai', fake.url, {
      headers: { 'HTTP-Referer': 'https://example.test', 'X-Title': 'axe' },
    });
    const provider = createProvider(settings, { retry: DEFAULT_RETRY, pool });
    for (const stream of [false, true]) {
      fake.enqueue({
        toolCalls: [{ name: 'get_weather', arguments: '{"city": "Pa' }],
        usage: { cost: 0.0042 },
      });
      const reply = await provider.chat(
        { ...conversation(stream), messages: [{ role: 'user', content: 'hi' }] },
        { signal: new AbortController().signal },
      );
      expect(reply.cost).toBe(0.0042);
      expect(reply.toolCalls[0]).toMatchObject({ name: 'get_weather', arguments: {} });
      expect(reply.toolCalls[0]?.argumentsError).toMatch(/not valid JSON/);
    }
    expect(fake.requests[0]?.headers['http-referer']).toBe('https://example.test');
    expect(fake.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it('a missing required key is a ConfigError (MissingKeyError) naming the env var, raised by chat before any request', async () => {
    fake.reset();
    const provider = createProvider(settingsFor('anthropic', fake.url, { apiKey: undefined }), {
      retry: DEFAULT_RETRY,
      pool,
    });
    await expect(
      provider.chat(conversation(false), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      name: 'MissingKeyError',
      exitCode: 2,
      message:
        'API key for provider "anthropic" is not configured (set ANTHROPIC_API_KEY or add to config.toml)',
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('a base URL that is not http(s) is a ConfigError naming where it is set, raised before any request', async () => {
    fake.reset();
    const rejection = (baseUrl: string, baseUrlEnv?: string) =>
      createProvider(
        { ...settingsFor('ollama', fake.url), baseUrl, ...(baseUrlEnv === undefined ? {} : { baseUrlEnv }) },
        { retry: DEFAULT_RETRY, pool },
      )
        .chat(conversation(false), { signal: new AbortController().signal })
        .catch((e) => e);
    expect(await rejection('localhost:11434', 'AXE_OLLAMA_BASE_URL')).toMatchObject({
      name: 'ConfigError',
      exitCode: 2,
      message:
        'invalid base URL for provider "ollama": "localhost:11434" is not an http:// or https:// URL (check AXE_OLLAMA_BASE_URL or base_url in config.toml)',
    });
    expect(await rejection('not a url')).toMatchObject({
      exitCode: 2,
      message:
        'invalid base URL for provider "ollama": "not a url" is not an http:// or https:// URL (check its base URL)',
    });
    expect(await rejection('ftp://127.0.0.1:9')).toMatchObject({ exitCode: 2 });
    expect(fake.requests).toHaveLength(0);
  });
});
