import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderError } from '../../internal/errors.js';
import * as google from '../../internal/provider/google.js';
import { createProvider } from '../../internal/provider/index.js';
import { DEFAULT_RETRY, type Message, type RetryPolicy } from '../../internal/provider/types.js';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { makeHome } from '../runner/harness.js';
import { chatFailure, conversation, FAST_RETRY, fakeLlmAndPool, noTools, settingsFor } from './helpers.js';
import { listen, shut } from './local-server.js';

/**
 * Gemini function calls: a finish that leaves no usable answer (a malformed call, …) fails the
 * call instead of passing for an empty success, and a call's `id` goes back with its result.
 */
const { fake, pool } = await fakeLlmAndPool();

const NO_RETRY: RetryPolicy = { ...FAST_RETRY, maxRetries: 0 };
const options = { signal: new AbortController().signal };
const gemini = (retry = FAST_RETRY) => createProvider(settingsFor('google', fake.url), { retry, pool });
const ask = (stream: boolean) => {
  const base = conversation(stream);
  return { ...base, messages: base.messages.slice(0, 1) };
};

describe('a Gemini finish that leaves no usable answer fails', () => {
  for (const stream of [false, true]) {
    const mode = stream ? 'streamed' : 'not streamed';

    it(`MALFORMED_FUNCTION_CALL with no content: a one-line server error, retried, never an empty success (${mode})`, async () => {
      fake.reset();
      fake.respond(() => ({ stopReason: 'MALFORMED_FUNCTION_CALL' }));
      const { error, events } = await chatFailure(gemini(), ask(stream));
      expect(error.message).toBe(
        "google: server error: the model's function call was malformed (finishReason MALFORMED_FUNCTION_CALL); a failure on the provider side: retry later (after 2 retries)",
      );
      expect(error.category).toBe('server');
      expect(error.exitCode).toBe(3);
      expect(error.details.retries).toBe(2);
      expect(fake.requests).toHaveLength(3);
      expect(events.map((e) => e.type)).toEqual(['retry', 'retry']);
      expect(fake.rejections).toEqual([]);
    });

    it(`a retry that gets the call right answers (${mode})`, async () => {
      fake.reset();
      fake.enqueue(
        { stopReason: 'MALFORMED_FUNCTION_CALL' },
        { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
      );
      const reply = await gemini().chat(ask(stream), options);
      expect(reply.retries).toBe(1);
      expect(reply.stopReason).toBe('STOP');
      expect(reply.toolCalls).toEqual([
        { id: 'gemini_0', name: 'get_weather', arguments: { city: 'Paris' } },
      ]);
    });

    it(`MALFORMED_FUNCTION_CALL after some text still fails: the text was only the lead-in (${mode})`, async () => {
      fake.reset();
      fake.respond(() => ({ text: 'Let me look that up.', stopReason: 'MALFORMED_FUNCTION_CALL' }));
      const { error } = await chatFailure(gemini(NO_RETRY), ask(stream));
      expect(error.message).toMatch(/^google: server error: the model's function call was malformed /);
      expect(fake.requests).toHaveLength(1);
    });

    it.each([
      ['UNEXPECTED_TOOL_CALL', "the model's tool call was invalid"],
      ['TOO_MANY_TOOL_CALLS', 'the model called too many tools in a row'],
      ['LANGUAGE', 'the model stopped: the language is not supported'],
      ['OTHER', 'the model stopped for an unspecified reason'],
    ])(`%s with no content fails (${mode})`, async (reason, what) => {
      fake.reset();
      fake.respond(() => ({ stopReason: reason }));
      const { error } = await chatFailure(gemini(NO_RETRY), ask(stream));
      expect(error.message).toBe(
        `google: server error: ${what} (finishReason ${reason}); a failure on the provider side: retry later`,
      );
      expect(error.exitCode).toBe(3);
    });

    it.each([
      ['LANGUAGE with text: the text is the answer', { text: 'Bonjour.', stopReason: 'LANGUAGE' }],
      ['OTHER with text: the text is the answer', { text: 'Partial.', stopReason: 'OTHER' }],
      [
        'MALFORMED_FUNCTION_CALL beside a call that came whole: the call runs',
        {
          toolCalls: [{ name: 'get_time', arguments: { zone: 'UTC' } }],
          stopReason: 'MALFORMED_FUNCTION_CALL',
        },
      ],
      ['MAX_TOKENS with nothing: unchanged, as on every wire', { stopReason: 'MAX_TOKENS' }],
    ] as [string, ScriptedReply][])(`%s (${mode})`, async (_name, reply) => {
      fake.reset();
      fake.respond(() => reply);
      const answer = await gemini(NO_RETRY).chat(ask(stream), options);
      expect(answer.content).toBe(reply.text ?? '');
      expect(answer.toolCalls.map((c) => c.name)).toEqual((reply.toolCalls ?? []).map((c) => c.name));
      expect(answer.stopReason).toBe(reply.stopReason);
    });

    it(`SAFETY with no content stays a refusal, as before (${mode})`, async () => {
      fake.reset();
      fake.respond(() => ({ stopReason: 'SAFETY' }));
      const answer = await gemini(NO_RETRY).chat(ask(stream), options);
      expect(answer).toMatchObject({ content: '', stopReason: 'SAFETY', refusal: 'SAFETY' });
    });
  }
});

describe('a prompt Gemini blocks (Model Armor, or any blockReason) is a refusal with its reason', () => {
  // As Vertex AI sends it: no candidates, the block in promptFeedback.
  const blocked = {
    promptFeedback: {
      blockReason: 'MODEL_ARMOR',
      blockReasonMessage: 'Blocked by Model Armor floor setting',
    },
    usageMetadata: { promptTokenCount: 12, totalTokenCount: 12 },
    modelVersion: 'gemini-2.5-flash',
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      const streamed = request.url?.includes(':streamGenerateContent');
      response.writeHead(200, { 'content-type': streamed ? 'text/event-stream' : 'application/json' });
      response.end(streamed ? `data: ${JSON.stringify(blocked)}\r\n\r\n` : JSON.stringify(blocked));
    });
  });
  let base = '';
  beforeAll(async () => {
    base = await listen(server);
  });
  afterAll(() => shut(server));

  for (const stream of [false, true]) {
    it(`promptFeedback.blockReason (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const provider = createProvider(settingsFor('google', base), { retry: NO_RETRY, pool });
      const answer = await provider.chat(ask(stream), options);
      expect(answer).toMatchObject({
        content: '',
        stopReason: 'MODEL_ARMOR',
        refusal: 'MODEL_ARMOR: Blocked by Model Armor floor setting',
      });
    });
  }

  it('finishReason MODEL_ARMOR', async () => {
    fake.reset();
    fake.respond(() => ({ stopReason: 'MODEL_ARMOR' }));
    const answer = await gemini(NO_RETRY).chat(ask(false), options);
    expect(answer).toMatchObject({ content: '', stopReason: 'MODEL_ARMOR', refusal: 'MODEL_ARMOR' });
  });

  it('an agent whose prompt was blocked fails like any refusal (exit 1), naming the reason', async () => {
    const home = makeHome(fake);
    try {
      fake.reset();
      fake.respond(() => ({ stopReason: 'MODEL_ARMOR' }));
      writeAgent(home.agentsDir, 'gem', '');
      const { outcome } = await home.run('gem', { env: geminiEnv() });
      expect(outcome.error?.exitCode).toBe(1);
      expect(outcome.error?.message).toBe('the model gave no answer: refused or blocked (MODEL_ARMOR)');
    } finally {
      home.remove();
    }
  });
});

describe('the finishMessage of a real-shaped MALFORMED_FUNCTION_CALL response', () => {
  // As the API sends it: no parts at all (`content: {}`), the reason and the message.
  const body = {
    candidates: [
      {
        content: {},
        finishReason: 'MALFORMED_FUNCTION_CALL',
        finishMessage: 'Malformed function call: print(default_api.get_weather(city="Paris",\n days=2',
        index: 0,
      },
    ],
    usageMetadata: { promptTokenCount: 51, totalTokenCount: 51 },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'mfc-1',
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      if (request.url?.includes(':streamGenerateContent')) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`data: ${JSON.stringify(body)}\r\n\r\n`);
      } else {
        response.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
        response.end(JSON.stringify(body));
      }
    });
  });
  let base = '';
  beforeAll(async () => {
    base = await listen(server);
  });
  afterAll(() => shut(server));

  for (const stream of [false, true]) {
    it(`is in the error, on one line (${stream ? 'streamed' : 'not streamed'})`, async () => {
      const provider = createProvider(settingsFor('google', base), { retry: NO_RETRY, pool });
      const { error } = await chatFailure(provider, ask(stream));
      expect(error.message).toBe(
        `google: server error: the model's function call was malformed (finishReason MALFORMED_FUNCTION_CALL: Malformed function call: print(default_api.get_weather(city="Paris", days=2); a failure on the provider side: retry later`,
      );
    });
  }

  it('is cut when it quotes a long call', () => {
    const long = {
      ...body,
      candidates: [{ ...body.candidates[0], finishMessage: `Malformed: ${'x'.repeat(1000)}` }],
    };
    expect(() => google.fromWire(long)).toThrow(
      /\(finishReason MALFORMED_FUNCTION_CALL: Malformed: x{289}…\)$/,
    );
  });
});

describe('an agent whose Gemini call was malformed', () => {
  it('fails with the provider error (exit 3) instead of ending with an empty answer', async () => {
    const home = makeHome(fake);
    try {
      fake.reset();
      fake.respond(() => ({ stopReason: 'MALFORMED_FUNCTION_CALL' }));
      writeAgent(home.agentsDir, 'gem', '[retry]\nmax_retries = 1\ninitial_delay_ms = 1');
      const { outcome } = await home.run('gem', { env: geminiEnv() });
      expect(outcome.error).toBeInstanceOf(ProviderError);
      expect(outcome.error?.exitCode).toBe(3);
      expect(outcome.error?.message).toBe(
        "google: server error: the model's function call was malformed (finishReason MALFORMED_FUNCTION_CALL); a failure on the provider side: retry later (after 1 retry)",
      );
      expect(outcome.result.content).toBe('');
      expect(fake.requests).toHaveLength(2);
    } finally {
      home.remove();
    }
  });
});

function writeAgent(agentsDir: string, name: string, extra = ''): void {
  const toml = `name = "${name}"\nmodel = "google/gemini-test"\nsystem_prompt = "agent:${name}"\n${extra}\n`;
  writeFileSync(path.join(agentsDir, `${name}.toml`), toml);
}

const geminiEnv = (): NodeJS.ProcessEnv => ({ GEMINI_API_KEY: 'test-key', AXE_GOOGLE_BASE_URL: fake.url });

describe('a function call id goes back with the call and its result', () => {
  it('toWire: a given id on the functionCall and the functionResponse, none for a made-up gemini_<i>', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Weather in Paris and the time in Tokyo?' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'abc', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'gemini_1', name: 'get_time', arguments: { zone: 'Asia/Tokyo' } },
        ],
      },
      {
        role: 'tool',
        results: [
          { callId: 'abc', name: 'get_weather', content: 'Sunny', isError: false },
          { callId: 'gemini_1', name: 'get_time', content: '09:00', isError: false },
        ],
      },
    ];
    expect(google.toWire({ ...noTools(), messages }).contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and the time in Tokyo?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { id: 'abc', name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_time', args: { zone: 'Asia/Tokyo' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'abc', name: 'get_weather', response: { output: 'Sunny' } } },
          { functionResponse: { name: 'get_time', response: { output: '09:00' } } },
        ],
      },
    ]);
  });

  it('fromWire: the given id is the call id; a missing or empty one is made up', () => {
    const response = google.fromWire({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { id: 'abc', name: 'a', args: {} } },
              { functionCall: { name: 'b', args: {} } },
              { functionCall: { id: '', name: 'c', args: {} } },
            ],
          },
          finishReason: 'STOP',
        },
      ],
    });
    expect(response.toolCalls.map((c) => c.id)).toEqual(['abc', 'gemini_1', 'gemini_2']);
  });

  for (const stream of [false, true]) {
    it(`a chat round trip through the fake server (${stream ? 'streamed' : 'not streamed'})`, async () => {
      fake.reset();
      fake.enqueue(
        {
          toolCalls: [
            { id: 'abc', name: 'get_weather', arguments: { city: 'Paris', days: 2 } },
            { name: 'get_time', arguments: { zone: 'Asia/Tokyo' } },
          ],
        },
        { text: 'Sunny; 09:00.' },
      );
      const provider = createProvider(settingsFor('google', fake.url), { retry: DEFAULT_RETRY, pool });
      const first = await provider.chat(ask(stream), options);
      expect(first.toolCalls.map((c) => c.id)).toEqual(['abc', 'gemini_1']);
      const history: Message[] = [
        ...ask(stream).messages,
        { role: 'assistant', content: first.content, toolCalls: first.toolCalls },
        {
          role: 'tool',
          results: first.toolCalls.map((call) => ({
            callId: call.id,
            name: call.name,
            content: 'ok',
            isError: false,
          })),
        },
      ];
      const final = await provider.chat({ ...ask(stream), messages: history }, options);
      expect(final.content).toBe('Sunny; 09:00.');
      expect(fake.rejections).toEqual([]);
      const second = fake.requests[1] as RecordedRequest;
      expect(second.toolResults.map((r) => r.callId)).toEqual(['abc', undefined]);
      expect(JSON.stringify(second.body).match(/"id":"[^"]*"/g)).toEqual(['"id":"abc"', '"id":"abc"']);
    });
  }

  it.each([
    ['abc', 'with the id the model gave'],
    [undefined, 'without an id when the model gave none'],
  ])('an agent answers a read_file call (id %s) %s', async (id, _how) => {
    const home = makeHome(fake);
    try {
      fake.reset();
      writeFileSync(path.join(home.root, 'notes.txt'), 'remember the milk');
      writeAgent(home.agentsDir, 'reader', `workdir = "${home.root}"\ntools = ["read_file"]`);
      fake.respond((request) =>
        request.toolResults.length === 0
          ? {
              toolCalls: [
                { ...(id === undefined ? {} : { id }), name: 'read_file', arguments: { path: 'notes.txt' } },
              ],
            }
          : { text: `read: ${request.toolResults[0]?.content}` },
      );
      const { outcome } = await home.run('reader', { env: geminiEnv() });
      expect(outcome.error).toBeUndefined();
      expect(outcome.result.content).toMatch(/^read: .*remember the milk/);
      expect(fake.rejections).toEqual([]);
      expect(fake.requests.map((r) => r.toolResults.map((result) => result.callId))).toEqual([[], [id]]);
    } finally {
      home.remove();
    }
  });
});
