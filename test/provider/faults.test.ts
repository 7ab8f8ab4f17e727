import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError, ProviderError } from '../../internal/errors.js';
import { createHttpPool, createProvider, type HttpPool } from '../../internal/provider/index.js';
import type { ChatOptions, ProviderApi, RetryPolicy, StreamEvent } from '../../internal/provider/types.js';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm, Fault } from '../fake-llm/types.js';
import { API_KEY, APIS, conversation, settingsFor } from './helpers.js';

const FAST_RETRY: RetryPolicy = { maxRetries: 2, backoff: 'fixed', initialDelayMs: 2, maxDelayMs: 200 };

let fake: FakeLlm;
let pool: HttpPool;
beforeAll(async () => {
  fake = await startFakeLlm();
  pool = createHttpPool();
});
afterAll(async () => {
  await pool.close();
  await fake.close();
});

async function failure(
  api: ProviderApi,
  stream: boolean,
  options: Partial<ChatOptions> = {},
  retry = FAST_RETRY,
): Promise<{ error: ProviderError; events: StreamEvent[]; ms: number }> {
  const provider = createProvider(settingsFor(api, fake.url), { retry, pool });
  const events: StreamEvent[] = [];
  const started = Date.now();
  try {
    await provider.chat(conversation(stream), {
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

interface Case {
  name: string;
  fault: Fault;
  category: string;
  exitCode: number;
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
    exitCode: 1,
    message: /\(HTTP 404\): Model not found.*check the model name "test-model" and the base URL/,
    requests: 1,
  },
  {
    name: '413',
    fault: { kind: 'status', status: 413 },
    category: 'bad_request',
    exitCode: 1,
    message: /\(HTTP 413\).*the request is too large/,
    requests: 1,
  },
  {
    name: '429',
    fault: { kind: 'status', status: 429, headers: { 'retry-after-ms': '3' } },
    category: 'rate_limit',
    exitCode: 3,
    message: /rate limited \(HTTP 429\): Rate limit exceeded.*lower the request rate/,
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
    message: /not valid JSON/,
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
      if (c.streamOnly && !stream) continue;
      it(`${c.name}${stream ? ' (streamed)' : ''}`, async () => {
        fake.reset();
        fake.respond(() => ({ text: 'partial answer', fault: c.fault }));
        const { error, events } = await failure(api, stream);
        expect(error.category).toMatch(new RegExp(`^(${c.category})$`));
        expect(error.exitCode).toBe(c.exitCode);
        expect(error.message).toMatch(new RegExp(`^${api === 'openai' ? 'openrouter' : api}: `));
        expect(error.message).toMatch(c.message);
        // A stream that already delivered events is never retried (the deltas cannot be taken back).
        const delivered = events.some((e) => e.type !== 'retry');
        const requests = stream && delivered ? 1 : c.requests;
        expect(fake.requests).toHaveLength(requests);
        expect(events.filter((e) => e.type === 'retry')).toHaveLength(requests - 1);
      });
    }
  }
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
    const { error, ms } = await failure('openai', false, { deadline: Date.now() + 2000 }, policy);
    expect(error.category).toBe('rate_limit');
    expect(error.details.retryAfterMs).toBe(30_000);
    expect(fake.requests).toHaveLength(1);
    expect(ms).toBeLessThan(1000);
  });

  it('auth and bad_request are never retried even with x-should-retry: true', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 401, headers: { 'x-should-retry': 'true' } } }));
    await failure('google', false);
    expect(fake.requests).toHaveLength(1);
  });
});

describe('deadlines and aborts', () => {
  it('a hang past the deadline is a timeout within deadline + 1 s, and the socket is closed', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    const { error, ms } = await failure('ollama', true, { deadline: Date.now() + 300 });
    expect(error.category).toBe('timeout');
    expect(error.exitCode).toBe(3);
    expect(error.message).toMatch(/timed out.*raise the timeout/);
    expect(ms).toBeLessThan(1300);
    await expect.poll(() => fake.requests[0]?.aborted).toBe(true);
  });

  it('a user abort mid-stream is cancelled (exit 130) and closes the socket', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'one two three four five six seven', chunkDelayMs: 200 }));
    const controller = new AbortController();
    const events: StreamEvent[] = [];
    const onEvent = (e: StreamEvent) => {
      events.push(e);
      controller.abort(new CancelledError('interrupted', 'SIGINT'));
    };
    const { error, ms } = await failure('anthropic', true, { signal: controller.signal, onEvent });
    expect(error.category).toBe('cancelled');
    expect(error.exitCode).toBe(130);
    expect(error.cause).toBeInstanceOf(CancelledError);
    expect(events.some((e) => e.type === 'text.delta')).toBe(true);
    expect(ms).toBeLessThan(1000);
    await expect.poll(() => fake.requests[0]?.aborted).toBe(true);
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
    await expect.poll(() => fake.requests[0]?.aborted).toBe(true);
  });

  it('an abort interrupts the wait before a retry', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 500 } }));
    const controller = new AbortController();
    setTimeout(() => controller.abort(new CancelledError()), 50);
    const slow = { ...FAST_RETRY, initialDelayMs: 5000, maxDelayMs: 10_000 };
    const { error, ms } = await failure('openai', false, { signal: controller.signal }, slow);
    expect(error.category).toBe('cancelled');
    expect(ms).toBeLessThan(1000);
    expect(fake.requests).toHaveLength(1);
  });

  it('a retry whose backoff would pass the deadline is not attempted', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'status', status: 503 } }));
    const slow = { ...FAST_RETRY, initialDelayMs: 500, maxDelayMs: 10_000 };
    const { error, ms } = await failure('google', false, { deadline: Date.now() + 300 }, slow);
    // Waiting would have ended in a timeout at the deadline; the error is the server's, at once.
    expect(error.category).toBe('server');
    expect(fake.requests).toHaveLength(1);
    expect(ms).toBeLessThan(500);
  });
});

describe('transport edge cases', () => {
  it('Ollama: connection refused names the expected address', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const base = `http://127.0.0.1:${port}`;
    const provider = createProvider(settingsFor('ollama', base), {
      retry: { ...FAST_RETRY, maxRetries: 0 },
      pool,
    });
    await expect(
      provider.chat(conversation(false), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      category: 'server',
      exitCode: 3,
      message: expect.stringContaining(`connection refused: is Ollama running? (expected at ${base})`),
    });
  });

  it('Ollama: a model without tool support is named', async () => {
    fake.reset();
    fake.enqueue({
      fault: {
        kind: 'status',
        status: 400,
        message: 'registry.ollama.ai/library/gemma:2b does not support tools',
      },
    });
    const { error } = await failure('ollama', false);
    expect(error.category).toBe('bad_request');
    expect(error.message).toMatch(/model "test-model" does not support tools/);
  });

  it('redirects are not followed', async () => {
    fake.reset();
    fake.enqueue({
      fault: { kind: 'status', status: 307, headers: { location: 'https://elsewhere.test/v1/messages' } },
    });
    const { error } = await failure('anthropic', false);
    expect(error.message).toMatch(/redirect to https:\/\/elsewhere\.test\/v1\/messages not followed/);
    expect(fake.requests).toHaveLength(1);
  });

  it('a response body past 32 MiB is cut with a clear error and not retried', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let served = 0;
    const server = createServer((_req, res) => {
      served += 1;
      res.writeHead(200, { 'content-type': 'application/json' });
      let sent = 0;
      const pump = () => {
        while (sent < 40) {
          sent += 1;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const provider = createProvider(settingsFor('anthropic', base), { retry: FAST_RETRY, pool });
    await expect(
      provider.chat(conversation(false), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      category: 'server',
      message: expect.stringContaining('response body larger than 32 MiB'),
    });
    expect(served).toBe(1);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('one keep-alive pool: sequential calls reuse one connection, parallel calls share the pool', async () => {
    let connections = 0;
    const reply = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    });
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
    });
    server.on('connection', () => {
      connections += 1;
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const ownPool = createHttpPool();
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const provider = createProvider(settingsFor('openai', base), { retry: FAST_RETRY, pool: ownPool });
    const signal = new AbortController().signal;
    for (let i = 0; i < 5; i++) await provider.chat(conversation(false), { signal });
    // undici may open a second socket when the next call starts in the same tick the previous body
    // ended; without keep-alive these five calls would take five.
    expect(connections).toBeLessThanOrEqual(2);
    const replies = await Promise.all([1, 2, 3].map(() => provider.chat(conversation(false), { signal })));
    expect(replies.map((r) => r.content)).toEqual(['ok', 'ok', 'ok']);
    expect(connections).toBeLessThanOrEqual(4);
    await ownPool.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("a proxy's HTML error page becomes a short plain-text message", async () => {
    const page = '<html><head><style>b{}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(502, { 'content-type': 'text/html' }).end(page));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const provider = createProvider(settingsFor('ollama', base), {
      retry: { ...FAST_RETRY, maxRetries: 0 },
      pool,
    });
    await expect(
      provider.chat(conversation(false), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      category: 'server',
      message:
        'ollama: server error (HTTP 502): 502 Bad Gateway nginx; a failure on the provider side: retry later',
    });
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('an error thrown by onEvent reaches the caller untouched and is not retried', async () => {
    fake.reset();
    fake.respond(() => ({ text: 'hello there' }));
    const provider = createProvider(settingsFor('openai', fake.url), { retry: FAST_RETRY, pool });
    const boom = new RangeError('renderer failed');
    await expect(
      provider.chat(conversation(true), {
        signal: new AbortController().signal,
        onEvent: () => {
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(fake.requests).toHaveLength(1);
  });

  it('closing the pool ends a request nobody aborted', async () => {
    fake.reset();
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    const ownPool = createHttpPool();
    const provider = createProvider(settingsFor('anthropic', fake.url), { retry: FAST_RETRY, pool: ownPool });
    const call = provider.chat(conversation(false), { signal: new AbortController().signal }).catch((e) => e);
    await expect.poll(() => fake.requests.length).toBe(1);
    const started = Date.now();
    await ownPool.close();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await call).toBeInstanceOf(ProviderError);
    await expect.poll(() => fake.requests[0]?.aborted).toBe(true);
  });
});
