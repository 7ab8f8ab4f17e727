import { getEventListeners, setMaxListeners } from 'node:events';
import { createServer, get } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../../internal/errors.js';
import { postJson } from '../../internal/provider/http.js';
import { createHttpPool, createProvider } from '../../internal/provider/index.js';
import type { WireApi } from '../../internal/provider/types.js';
import { chatFailure, conversation, FAST_RETRY, fakeLlmAndPool, settingsFor } from './helpers.js';
import { listen, okReply as reply, shut } from './local-server.js';

/** The HTTP layer under the providers: refused connections, redirects, size bounds, the pool. */
const { fake, pool } = await fakeLlmAndPool();

const failure = (api: WireApi) =>
  chatFailure(createProvider(settingsFor(api, fake.url), { retry: FAST_RETRY, pool }), conversation(false));

describe('transport edge cases', () => {
  it('connection refused names the expected address (Ollama: the Go axe message)', async () => {
    const server = createServer();
    const base = await listen(server);
    await shut(server);
    const refused = async (api: WireApi) => {
      const provider = createProvider(settingsFor(api, base), {
        retry: { ...FAST_RETRY, maxRetries: 0 },
        pool,
      });
      return provider.chat(conversation(false), { signal: new AbortController().signal }).catch((e) => e);
    };
    expect(await refused('ollama')).toMatchObject({
      category: 'server',
      exitCode: 3,
      message: `ollama: server error: connection refused: is Ollama running? (expected at ${base})`,
    });
    expect(await refused('openai')).toMatchObject({
      category: 'server',
      exitCode: 3,
      message: `openrouter: server error: connection refused at ${base}/v1; check that the server is running and the base URL is right`,
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
    const { error } = await failure('ollama');
    expect(error.category).toBe('bad_request');
    expect(error.message).toMatch(/model "test-model" does not support tools/);
  });

  it('redirects are not followed', async () => {
    fake.reset();
    fake.enqueue({
      fault: { kind: 'status', status: 307, headers: { location: 'https://elsewhere.test/v1/messages' } },
    });
    const { error } = await failure('anthropic');
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
    const base = await listen(server);
    const provider = createProvider(settingsFor('anthropic', base), { retry: FAST_RETRY, pool });
    await expect(
      provider.chat(conversation(false), { signal: new AbortController().signal }),
    ).rejects.toMatchObject({
      category: 'server',
      message: expect.stringMatching(
        /response body larger than 32 MiB \(axe's limit for one response\); no model answer is that large: check the base URL http:/,
      ),
    });
    expect(served).toBe(1);
    await shut(server);
  });

  it('one keep-alive pool: sequential calls reuse one connection, parallel calls share the pool', async () => {
    let connections = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
    });
    server.on('connection', () => {
      connections += 1;
    });
    const ownPool = createHttpPool();
    const base = await listen(server);
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
    await shut(server);
  });

  it('a wide fan-out keeps every idle connection until the pool closes (none closed while the run waits)', async () => {
    const WIDTH = 300;
    let waiting: (() => void)[] = [];
    const server = createServer((req, res) => {
      req.resume();
      // Every request is answered once all of them arrived: WIDTH connections at once.
      waiting.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
      if (waiting.length === WIDTH) for (const answer of waiting.splice(0)) answer();
    });
    let open = 0;
    let closedByClient = 0;
    server.on('connection', (socket) => {
      open += 1;
      socket.on('end', () => {
        closedByClient += 1;
      });
    });
    const ownPool = createHttpPool();
    const base = await listen(server);
    const provider = createProvider(settingsFor('openai', base), { retry: FAST_RETRY, pool: ownPool });
    // As a run's signal is made (runner/context.ts): every request of a fan-out listens on it.
    const signal = new AbortController().signal;
    setMaxListeners(0, signal);
    const replies = await Promise.all(
      Array.from({ length: WIDTH }, () => provider.chat(conversation(false), { signal })),
    );
    expect(replies.every((r) => r.content === 'ok')).toBe(true);
    expect(open).toBe(WIDTH);
    // Node's default keeps 256 idle sockets and closes the rest as they come free.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closedByClient).toBe(0);
    await ownPool.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closedByClient).toBe(WIDTH);
    waiting = [];
    await shut(server);
  });

  it("every call removes its abort listener from the caller's signal once it is over", async () => {
    fake.reset();
    fake.respond(() => ({ text: 'ok' }));
    const provider = createProvider(settingsFor('openai', fake.url), { retry: FAST_RETRY, pool });
    // No deadline: the request listens on the caller's own signal (an agent's, for all its turns).
    const signal = new AbortController().signal;
    for (let turn = 0; turn < 12; turn++) {
      await provider.chat(conversation(false), { signal });
      await provider.chat(conversation(true), { signal });
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it("a proxy's HTML error page becomes a short plain-text message", async () => {
    const page = '<html><head><style>b{}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>';
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(502, { 'content-type': 'text/html' }).end(page));
    });
    const base = await listen(server);
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
    await shut(server);
  });

  it('an error page is masked before it is cut short: no part of a key it echoes is left', async () => {
    const key = 'sk-cut-0123456789abcdefghijklmnopqrstuvwxyz';
    // The key straddles the 200th character, where the message is cut.
    const page = `<html><body><p>${'x'.repeat(170)} ${key} rest of the page</p></body></html>`;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(502, { 'content-type': 'text/html' }).end(page));
    });
    const base = await listen(server);
    const provider = createProvider(settingsFor('ollama', base, { apiKey: key }), {
      retry: { ...FAST_RETRY, maxRetries: 0 },
      pool,
    });
    const { error } = await chatFailure(provider, conversation(false));
    expect(error.message).toContain(`${'x'.repeat(170)} *** rest of the page`);
    expect(error.message).not.toContain('sk-cut-0123');
    await shut(server);
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
    await ownPool.close();
    // The server never answers: the call ends only because the pool closed.
    expect(await call).toBeInstanceOf(ProviderError);
    await expect.poll(() => fake.requests[0]?.aborted, { timeout: 10_000 }).toBe(true);
  });

  it('a closed pool sends nothing more, whether or not it ever connected', async () => {
    fake.reset();
    for (const used of [false, true]) {
      const ownPool = createHttpPool();
      const provider = createProvider(settingsFor('openai', fake.url), {
        retry: { ...FAST_RETRY, maxRetries: 0 },
        pool: ownPool,
      });
      fake.enqueue({ text: 'ok' });
      if (used) await provider.chat(conversation(false), { signal: new AbortController().signal });
      await ownPool.close();
      const sent = fake.requests.length;
      const { error } = await chatFailure(provider, conversation(false));
      expect(error.message).toContain('the HTTP pool is closed');
      expect(fake.requests).toHaveLength(sent);
    }
  });

  it("a response's headers are read as Node reads them: repeats joined, the first kept where Node keeps it", async () => {
    const head = [
      'HTTP/1.1 200 OK',
      'Content-Type: application/json',
      'content-type: text/html',
      'Retry-After: 1',
      'retry-after: 7',
      'X-Multi: a',
      'x-multi: b',
      'Cookie: c=1',
      'cookie: d=2',
      'Set-Cookie: s=1',
      'Set-Cookie: t=2',
      'Request-Id: req_1',
      '__proto__: p',
      'Content-Length: 2',
      'Connection: close',
    ].join('\r\n');
    const server = createTcpServer((socket) => {
      socket.once('data', () => socket.end(`${head}\r\n\r\n{}`));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const url = `http://127.0.0.1:${port}/v1`;
    try {
      const ownPool = createHttpPool();
      const response = await postJson(ownPool, url, {}, '{}', new AbortController().signal);
      response.body.resume();
      await ownPool.close();
      const nodes = await new Promise<Record<string, string | string[] | undefined>>((resolve, reject) =>
        get(url, (reply) => {
          reply.resume();
          resolve(reply.headers);
        }).on('error', reject),
      );
      const expected = Object.fromEntries(
        Object.entries(nodes).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
      );
      // Node's own getter drops a header named __proto__ (it assigns it to a plain object).
      const ours = Object.entries(response.headers).filter(([name]) => name !== '__proto__');
      expect(Object.fromEntries(ours)).toEqual(expected);
      expect(response.headers).toMatchObject({
        'content-type': 'application/json',
        'retry-after': '1',
        'x-multi': 'a, b',
        cookie: 'c=1; d=2',
        'set-cookie': 's=1, t=2',
        'request-id': 'req_1',
      });
      expect(Object.getOwnPropertyDescriptor(response.headers, '__proto__')?.value).toBe('p');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
