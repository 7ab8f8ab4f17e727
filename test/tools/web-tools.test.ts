import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { fetchUrl, getPinned } from '../../internal/tools/url-fetch.js';
import { type FakeTavily, startFakeTavily } from '../fake-tavily/server.js';
import { type CountingServer, startCountingServer } from './counting-server.js';
import { call, toolContext } from './helpers.js';

const { url_fetch, web_search } = BUILTIN_TOOLS;
const LOOPBACK = { AXE_ALLOW_PRIVATE_HOSTS: '1' };

describe('url_fetch', () => {
  let server: CountingServer;
  beforeAll(async () => {
    server = await startCountingServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/page') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(
          '<html><head><title>T</title><style>p{}</style><script>alert(1)</script></head>' +
            '<body><h1>Hello &amp; welcome</h1><p>First&nbsp;para</p><!-- hidden --><p>Second &#233;</p></body></html>',
        );
      } else if (path === '/big') {
        res.setHeader('content-type', 'text/plain');
        res.end('x'.repeat(50_000));
      } else if (path.startsWith('/hop/')) {
        const n = Number(path.slice(5));
        res.writeHead(302, { location: n > 0 ? `/hop/${n - 1}` : '/page' });
        res.end();
      } else if (path === '/missing') {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('no such page');
      } else if (path === '/image') {
        res.setHeader('content-type', 'image/png');
        res.end(Buffer.alloc(64));
      } else {
        res.end('plain');
      }
    });
  });
  afterAll(() => server.close());
  const ctx = () => toolContext('/tmp', { env: LOOPBACK });

  it('turns HTML into text without scripts or styles', async () => {
    const out = await call(url_fetch, { url: `${server.url}/page` }, ctx());
    expect(out).toEqual({ content: 'T\nHello & welcome\nFirst para\nSecond é', isError: false });
  });

  it('truncates at 10 000 characters with a marker', async () => {
    const out = await call(url_fetch, { url: `${server.url}/big` }, ctx());
    expect(out.content).toBe(`${'x'.repeat(10_000)}\n... [response truncated, exceeded 10000 characters]`);
  });

  it('follows up to 10 redirects and stops after that', async () => {
    expect((await call(url_fetch, { url: `${server.url}/hop/9` }, ctx())).content).toContain(
      'Hello & welcome',
    );
    const tooMany = await call(url_fetch, { url: `${server.url}/hop/10` }, ctx());
    expect(tooMany).toEqual({
      content: `url_fetch failed for ${server.url}/hop/10: too many redirects (more than 10)`,
      isError: true,
    });
  });

  it('never echoes a query (it may carry a token) in its error messages', async () => {
    const out = await call(url_fetch, { url: 'http://169.254.169.254/latest?token=sk-secret' }, ctx());
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/^url_fetch refused http:\/\/169\.254\.169\.254\/latest\?…: /);
    expect(out.content).not.toContain('sk-secret');
  });

  it('reports HTTP errors and describes binary bodies', async () => {
    expect(await call(url_fetch, { url: `${server.url}/missing` }, ctx())).toEqual({
      content: 'HTTP 404: no such page',
      isError: true,
    });
    expect((await call(url_fetch, { url: `${server.url}/image` }, ctx())).content).toBe(
      '[binary content: image/png, 64 bytes]',
    );
  });

  it('honours allowed_hosts by exact host', async () => {
    const allowed = toolContext('/tmp', { env: LOOPBACK, allowedHosts: ['127.0.0.1'] });
    expect((await call(url_fetch, { url: `${server.url}/` }, allowed)).content).toBe('plain');
    const other = toolContext('/tmp', { env: LOOPBACK, allowedHosts: ['example.com'] });
    expect((await call(url_fetch, { url: `${server.url}/` }, other)).content).toContain(
      'host "127.0.0.1" is not in allowed_hosts',
    );
  });

  it('rejects a URL that does not parse', async () => {
    expect(await call(url_fetch, { url: 'not a url' }, ctx())).toEqual({
      content: 'invalid url "not a url"',
      isError: true,
    });
  });
});

describe('web_search', () => {
  let tavily: FakeTavily;
  beforeAll(async () => {
    tavily = await startFakeTavily('tvly-test');
  });
  afterAll(() => tavily.close());

  it('posts the query to Tavily and lists the results as Go axe does', async () => {
    const env = { TAVILY_API_KEY: 'tvly-test', AXE_TAVILY_BASE_URL: tavily.url };
    const out = await call(
      web_search,
      { query: 'axe agents', max_results: '2' },
      toolContext('/tmp', { env }),
    );
    expect(out).toEqual({
      content:
        'Title: Result 1 for axe agents\nURL: https://example.com/1\nSnippet: Snippet 1\n  about axe agents.\n\n' +
        'Title: Result 2 for axe agents\nURL: https://example.com/2\nSnippet: Snippet 2\n  about axe agents.',
      isError: false,
    });
    expect(tavily.requests.at(-1)).toMatchObject({
      path: '/search',
      authorization: 'Bearer tvly-test',
      body: { query: 'axe agents', max_results: 2, search_depth: 'basic' },
    });
    await call(web_search, { query: 'default count' }, toolContext('/tmp', { env }));
    expect(tavily.requests.at(-1)?.body).toMatchObject({ max_results: 10 });
  });

  it('uses AXE_WEB_SEARCH_BASE_URL too and reports a rejected key without echoing it', async () => {
    const env = { TAVILY_API_KEY: 'wrong', AXE_WEB_SEARCH_BASE_URL: tavily.url };
    const out = await call(web_search, { query: 'q' }, toolContext('/tmp', { env }));
    expect(out).toEqual({
      content:
        'Tavily API error (HTTP 401): {"detail":{"error":"Unauthorized: missing or invalid API key."}}',
      isError: true,
    });
  });

  it('names the env var when the key is missing, without a request', async () => {
    const before = tavily.requests.length;
    const out = await call(
      web_search,
      { query: 'q' },
      toolContext('/tmp', { env: { AXE_TAVILY_BASE_URL: tavily.url } }),
    );
    expect(out).toEqual({ content: 'TAVILY_API_KEY environment variable is not set', isError: true });
    expect(tavily.requests.length).toBe(before);
  });

  it('refuses an answer over 100 KB; says when nothing was found', async () => {
    const server = await startCountingServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(req.url === '/big/search' ? `{"results":[],"pad":"${'x'.repeat(110_000)}"}` : '{"results":[]}');
    });
    try {
      const search = (base: string) =>
        call(
          web_search,
          { query: 'q' },
          toolContext('/tmp', { env: { TAVILY_API_KEY: 'k', AXE_TAVILY_BASE_URL: base } }),
        );
      expect(await search(`${server.url}/big`)).toEqual({
        content: 'Tavily response too large to process',
        isError: true,
      });
      expect(await search(server.url)).toEqual({ content: 'No results found.', isError: false });
    } finally {
      await server.close();
    }
  });
});

describe('url_fetch connection pinning (DNS rebinding)', () => {
  it('dials the address checked once, never resolving the name again', async () => {
    let host = '';
    const server = await startCountingServer((req, res) => {
      host = req.headers.host ?? '';
      res.end('pinned');
    });
    try {
      const url = new URL(`http://rebind.invalid:${server.port}/`);
      const policy = { allowedHosts: [], allowLoopback: true };
      const response = await getPinned(
        { url, address: '127.0.0.1', family: 4 },
        policy,
        AbortSignal.timeout(5000),
      );
      expect(await response.body.text()).toBe('pinned');
      expect(host).toBe(`rebind.invalid:${server.port}`);
      await expect(
        getPinned(
          { url, address: '127.0.0.1', family: 4 },
          { allowedHosts: [], allowLoopback: false },
          AbortSignal.timeout(5000),
        ),
      ).rejects.toThrow('address 127.0.0.1 is a loopback address');
      expect(server.connections()).toBe(1);
    } finally {
      await server.close();
    }
  });
});

describe('url_fetch time limit', () => {
  let server: CountingServer;
  beforeAll(async () => {
    // Headers at once, then one byte every 200 ms, forever.
    server = await startCountingServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('x'), 200);
      res.on('close', () => clearInterval(timer));
    });
  });
  afterAll(() => server.close());

  it('is a total limit: a server that drips bytes is cut off when it passes', async () => {
    // The server drips for ever: that the fetch ends at all, with this message, is the limit's doing.
    const fetched = fetchUrl(`${server.url}/drip`, toolContext('/tmp', { env: LOOPBACK }), 1000);
    await expect(fetched).rejects.toThrow(`url_fetch timed out after 1s: ${server.url}/drip`);
  });

  it('the run ending (deadline, Ctrl-C) ends the body read too', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('run ended')), 300);
    // Not cut off by url_fetch's own limit (which says "timed out"): by the run's end.
    const out = await call(
      url_fetch,
      { url: `${server.url}/drip` },
      toolContext('/tmp', { env: LOOPBACK, signal: controller.signal }),
    );
    expect(out).toEqual({ content: 'url_fetch: cancelled', isError: true });
  });
});
