import { describe, expect, it } from 'vitest';
import { followParent } from '../../internal/abort.js';
import { CancelledError } from '../../internal/errors.js';
import { createProvider } from '../../internal/provider/index.js';
import type { ChatOptions, StreamEvent, WireApi } from '../../internal/provider/types.js';
import type { Fault } from '../fake-llm/types.js';
import {
  APIS,
  type ChatFailure,
  chatFailure,
  conversation,
  FAST_RETRY,
  fakeLlmAndPool,
  settingsFor,
} from './helpers.js';

const { fake, pool } = await fakeLlmAndPool();

function failure(
  api: WireApi,
  stream: boolean,
  options: Partial<ChatOptions> = {},
  retry = FAST_RETRY,
): Promise<ChatFailure> {
  return chatFailure(
    createProvider(settingsFor(api, fake.url), { retry, pool }),
    conversation(stream),
    options,
  );
}

interface Case {
  name: string;
  fault: Fault;
  category: string;
  /** Go axe's exit code, by wire where its providers differ. */
  exitCode: number | ((api: WireApi) => number);
  message: RegExp;
  /** Requests the call makes in total (1 + retries). */
  requests: number;
  streamOnly?: boolean;
}

const CASES: Case[] = [
  {
    name: '400',
    fault: { kind: 'status', status: 400 },
    category: 'bad_request',
    exitCode: 1,
    message: /request rejected \(HTTP 400\): Invalid request.*check the model "test-model"/,
    requests: 1,
  },
  {
    name: '401',
    fault: { kind: 'status', status: 401 },
    category: 'auth',
    exitCode: 3,
    message: /authentication failed \(HTTP 401\): Invalid API key.*check the API key in [A-Z]+_API_KEY/,
    requests: 1,
  },
  {
    name: '403',
    fault: { kind: 'status', status: 403 },
    category: 'auth',
    exitCode: 3,
    message: /\(HTTP 403\): Permission denied.*may use model "test-model"/,
    requests: 1,
  },
  {
    name: '404',
    fault: { kind: 'status', status: 404 },
    category: 'bad_request',
    // Go's Anthropic and Bedrock providers count a 404 as a server error; the others as a bad request.
    exitCode: (api) => (api === 'anthropic' || api === 'bedrock' ? 3 : 1),
    message: /\(HTTP 404\): Model not found.*check the model name "test-model" and the base URL/,
    requests: 1,
  },
  {
    name: '413',
    fault: { kind: 'status', status: 413 },
    category: 'bad_request',
    // A server error to every Go provider.
    exitCode: 3,
    message: /\(HTTP 413\).*the request is too large/,
    requests: 1,
  },
  {
    name: '429',
    fault: { kind: 'status', status: 429, headers: { 'retry-after-ms': '3' } },
    category: 'rate_limit',
    exitCode: 3,
    message: /rate limited \(HTTP 429\): Rate limit exceeded.*; lower the request rate or retry in 3 ms/,
    requests: 3,
  },
  {
    name: '500',
    fault: { kind: 'status', status: 500 },
    category: 'server',
    exitCode: 3,
    message: /server error \(HTTP 500\): Internal server error.*retry later/,
    requests: 3,
  },
  {
    name: '503',
    fault: { kind: 'status', status: 503 },
    category: 'server',
    exitCode: 3,
    message: /\(HTTP 503\)/,
    requests: 3,
  },
  {
    name: '529',
    fault: { kind: 'status', status: 529 },
    category: 'overloaded',
    exitCode: 3,
    message: /overloaded \(HTTP 529\).*retry later/,
    requests: 3,
  },
  {
    name: 'invalid JSON',
    fault: { kind: 'invalid-json' },
    category: 'server',
    exitCode: 3,
    message: /server error: (the response body|stream (event|line)) is not valid JSON: \{"[a-z]/,
    requests: 3,
  },
  {
    name: 'truncated body',
    fault: { kind: 'truncate' },
    category: 'server',
    exitCode: 3,
    message: /server error: (.*not valid JSON|the connection was closed|the stream ended before)/,
    requests: 3,
  },
  {
    name: 'connection reset',
    fault: { kind: 'reset' },
    category: 'server',
    exitCode: 3,
    message: /server error: the connection was closed before the response was complete/,
    requests: 3,
  },
  {
    name: 'mid-stream error (not retried: events were delivered)',
    fault: { kind: 'mid-stream-error', message: 'Overloaded' },
    category: 'server|overloaded',
    exitCode: 3,
    message: /Overloaded/,
    requests: 1,
    streamOnly: true,
  },
];

describe.each(APIS)('%s fault matrix', (api) => {
  for (const stream of [false, true]) {
    for (const c of CASES) {
      // Bedrock does not stream: there is no stream to break in the middle.
      if (c.streamOnly && (!stream || api === 'bedrock')) continue;
      it(`${c.name}${stream ? ' (streamed)' : ''}`, async () => {
        fake.reset();
        fake.respond(() => ({ text: 'partial answer', fault: c.fault }));
        const { error, events } = await failure(api, stream);
        expect(error.category).toMatch(new RegExp(`^(${c.category})$`));
        expect(error.exitCode).toBe(typeof c.exitCode === 'number' ? c.exitCode : c.exitCode(api));
        expect(error.message).toMatch(new RegExp(`^${api === 'openai' ? 'openrouter' : api}: `));
        expect(error.message).toMatch(c.message);
        // A stream that already delivered events is never retried (the deltas cannot be taken back).
        const delivered = events.some((e) => e.type !== 'retry');
        const requests = stream && delivered ? 1 : c.requests;
        expect(fake.requests).toHaveLength(requests);
        expect(events.filter((e) => e.type === 'retry')).toHaveLength(requests - 1);
        const retried = { 1: /[^)]$/, 2: /\(after 1 retry\)$/, 3: /\(after 2 retries\)$/ }[requests];
        expect(error.message).toMatch(retried ?? /never/);
        expect(error.details.retries ?? 0).toBe(requests - 1);
      });
    }
  }
});

it('never shows credentials carried in the base URL', async () => {
  fake.reset();
  fake.respond(() => ({ fault: { kind: 'status', status: 404 } }));
  const settings = settingsFor('anthropic', fake.url.replace('http://', 'http://user:url-secret@'));
  const { error } = await chatFailure(
    createProvider(settings, { retry: FAST_RETRY, pool }),
    conversation(false),
  );
  expect(error.message).toMatch(/the base URL http:\/\/\*\*\*@127\.0\.0\.1:\d+\/$/);
  expect(error.message).not.toContain('url-secret');
});

it('a 401 names where the key came from: its variable, or its config.toml field', async () => {
  fake.reset();
  fake.respond(() => ({ fault: { kind: 'status', status: 401 } }));
  const fromConfig = settingsFor('anthropic', fake.url, { apiKeySource: 'config' });
  const { error } = await chatFailure(
    createProvider(fromConfig, { retry: FAST_RETRY, pool }),
    conversation(false),
  );
  expect(error.message).toMatch(/; check the API key in providers\.anthropic\.api_key in config\.toml$/);
  const fromEnv = settingsFor('anthropic', fake.url, { apiKeySource: 'env' });
  const again = await chatFailure(createProvider(fromEnv, { retry: FAST_RETRY, pool }), conversation(false));
  expect(again.error.message).toMatch(/; check the API key in ANTHROPIC_API_KEY$/);
});

describe('retries', () => {
  it('a 429 with retry-after-ms is retried after that wait and the retry is counted', async () => {
    fake.reset();
    fake.enqueue(
      { fault: { kind: 'status', status: 429, headers: { 'retry-after-ms': '40' } } },
      { fault: { kind: 'status', status: 503 } },
      { text: 'finally' },
    );
    const provider = createProvider(settingsFor('anthropic', fake.url), { retry: FAST_RETRY, pool });
    const events: StreamEvent[] = [];
    const reply = await provider.chat(conversation(false), {
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e),
    });
    expect(reply).toMatchObject({ content: 'finally', retries: 2 });
    const retries = events.filter((e) => e.type === 'retry');
    expect(retries.map((e) => e.type === 'retry' && [e.attempt, e.delayMs])).toEqual([
      [1, 40],
      [2, 2],
    ]);
    const [first, second] = fake.requests;
    expect((second?.receivedAt ?? 0) - (first?.finishedAt ?? 0)).toBeGreaterThanOrEqual(35);
  });

  it('x-should-retry: false stops retries of a 500; retry-after seconds past the deadline are not waited', async () => {
    fake.reset();
    fake.enqueue({ fault: { kind: 'status', status: 500, headers: { 'x-should-retry': 'false' } } });
    expect((await failure('anthropic', false)).error.category).toBe('server');
    expect(fake.requests).toHaveLength(1);

    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 429, headers: { 'retry-after': '30' } } }));
    const policy = { ...FAST_RETRY, maxDelayMs: 60_000 };
    const { error } = await failure('openai', false, { deadline: Date.now() + 2000 }, policy);
    // Not waited for: a wait would have ended at the deadline, in a timeout.
    expect(error.category).toBe('rate_limit');
    expect(error.details.retryAfterMs).toBe(30_000);
    expect(error.message).toMatch(
      /; lower the request rate or retry in 30 s \(retries are set by \[retry\] max_retries\)$/,
    );
    expect(fake.requests).toHaveLength(1);
  });

  it("Gemini's RetryInfo.retryDelay is honoured when it fits, and named when it does not", async () => {
    fake.reset();
    fake.enqueue({ fault: { kind: 'status', status: 429, retryDelay: '0.06s' } }, { text: 'after the wait' });
    const provider = createProvider(settingsFor('google', fake.url), { retry: FAST_RETRY, pool });
    const events: StreamEvent[] = [];
    const reply = await provider.chat(conversation(false), {
      signal: new AbortController().signal,
      onEvent: (e) => events.push(e),
    });
    expect(reply).toMatchObject({ content: 'after the wait', retries: 1 });
    expect(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.delayMs)).toEqual([
      60,
    ]);

    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 429, retryDelay: '34.4s' } }));
    const policy = { ...FAST_RETRY, maxDelayMs: 60_000 };
    const { error } = await failure('google', false, { deadline: Date.now() + 2000 }, policy);
    expect(error.category).toBe('rate_limit');
    expect(error.details.retryAfterMs).toBe(34_400);
    expect(error.message).toMatch(/retry in 35 s \(retries are set by/);
    expect(fake.requests).toHaveLength(1);
  });

  it("an overloaded or failing server's retry-after is in the message when the wait is not made", async () => {
    for (const status of [529, 503]) {
      fake.reset();
      fake.respond(() => ({ fault: { kind: 'status', status, headers: { 'retry-after': '7' } } }));
      const { error } = await failure('anthropic', false, { deadline: Date.now() + 2000 });
      expect(error.message).toMatch(/: retry in 7 s$/);
      expect(fake.requests).toHaveLength(1);
    }
  });

  it('auth and bad_request are never retried even with x-should-retry: true', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 401, headers: { 'x-should-retry': 'true' } } }));
    await failure('google', false);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('deadlines and aborts', () => {
  it('a hang past the deadline is a timeout at the deadline, and the socket is closed', async () => {
    fake.reset();
    // The server never answers: the call can only end by the deadline.
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    const { error } = await failure('ollama', true, { deadline: Date.now() + 300 });
    expect(error.category).toBe('timeout');
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(
      /^ollama: timed out: request aborted at the deadline; the run's deadline passed before the provider answered: raise --timeout or the agent's timeout$/,
    );
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 10_000 }).toBe(true);
  });

  it('a signal that aborts by the deadline on its own (the runner passes one) gets no second timer: the call still ends there, a timeout naming why', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;
    const hangingUntil = async (options: Partial<ChatOptions>) => {
      fake.reset();
      fake.respond(() => ({ fault: { kind: 'hang' } }));
      const before = timers();
      const call = failure('anthropic', false, options);
      await expect.poll(() => fake.requests.length, { timeout: 10_000 }).toBe(1);
      const during = timers() - before;
      return { during, ...(await call) };
    };
    // A plain signal: the call times itself.
    const plain = await hangingUntil({ signal: new AbortController().signal, deadline: Date.now() + 300 });
    expect(plain.during).toBe(1);
    expect(plain.error.category).toBe('timeout');
    // The runner's signal: its own timer ends the call at the deadline.
    const scoped = followParent(new AbortController().signal, {
      ms: 300,
      reason: () => new Error('timeout after 0.3s'),
    });
    const deadline = Date.now() + 300;
    const runner = await hangingUntil({ signal: scoped.controller.signal, deadline });
    scoped.dispose();
    expect(runner.during).toBe(0);
    expect(runner.error.category).toBe('timeout');
    expect(runner.error.message).toContain('request aborted at the deadline (timeout after 0.3s)');
  });

  it('a user abort mid-stream is cancelled (exit 130) and closes the socket', async () => {
    fake.reset();
    // A stream that would take over a minute: the call ends before it only by the abort.
    fake.respond(() => ({ text: 'word '.repeat(400), chunkDelayMs: 200 }));
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const onEvent = (e: StreamEvent) => {
      events.push(e);
      controller.abort(new CancelledError('interrupted', 'SIGINT'));
    };
    const { error } = await failure('anthropic', true, { signal: controller.signal, onEvent });
    expect(error.category).toBe('cancelled');
    expect(error.exitCode).toBe(130);
    expect(error.cause).toBeInstanceOf(CancelledError);
    expect(events.some((e) => e.type === 'text.delta')).toBe(true);
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 10_000 }).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it("the caller's own deadline abort (not a CancelledError) is a timeout naming its reason", async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('timeout after 2s')), 50);
    const { error } = await failure('google', false, { signal: controller.signal });
    expect(error.category).toBe('timeout');
    expect(error.message).toContain('request aborted at the deadline (timeout after 2s)');
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 10_000 }).toBe(true);
  });

  it('an abort interrupts the wait before a retry', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 500 } }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new CancelledError()), 50);
    // A wait of a minute: the call ends before it only by the abort.
    const slow = { ...FAST_RETRY, initialDelayMs: 60_000, maxDelayMs: 120_000 };
    const { error } = await failure('openai', false, { signal: controller.signal }, slow);
    expect(error.category).toBe('cancelled');
    expect(fake.requests).toHaveLength(1);
  });

  it('an abort after a retry says the retries made', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 500 } }));
    const controller = new AbortController();
    const onEvent = (e: StreamEvent) => {
      if (e.type === 'retry' && e.attempt === 2) controller.abort(new CancelledError());
    };
    const { error } = await failure('google', false, { signal: controller.signal, onEvent });
    expect(error.message).toMatch(
      /^google: cancelled: request aborted; the run was cancelled \(after 1 retry\)$/,
    );
    expect(error.details.retries).toBe(1);
    expect(fake.requests).toHaveLength(2);
  });

  it('a retry whose backoff would pass the deadline is not attempted', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 503 } }));
    const slow = { ...FAST_RETRY, initialDelayMs: 500, maxDelayMs: 10_000 };
    const { error } = await failure('google', false, { deadline: Date.now() + 300 }, slow);
    // Waiting would have ended in a timeout at the deadline; the error is the server's.
    expect(error.category).toBe('server');
    expect(fake.requests).toHaveLength(1);
  });
});
