import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpPool, type HttpPool } from '../../internal/http/pool.js';
import { readText } from '../../internal/provider/http.js';
import { maskSecrets } from '../../internal/secrets.js';
import { skipBecause } from '../skip.js';
import { closed, NO_ANSWER, type RawServer, startRawServer, within } from './raw-server.js';

/**
 * The pool behind a proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, as Go reads them): https:// through
 * a CONNECT tunnel, http:// in absolute form, what bypasses the proxy, and a proxy that refuses,
 * closes or never answers. The proxy is a small forward proxy written here; it resolves every
 * `*.test` host to 127.0.0.1 (the client never resolves a proxied host itself), so targets are
 * named `api.test` and not 127.0.0.1, which is never proxied.
 */

/** What a proxy saw: each request line (`CONNECT api.test:443`, `POST http://…`) and its Proxy-Authorization. */
interface Seen {
  line: string;
  authorization: string | undefined;
}

interface TestProxy {
  url: string;
  port: number;
  seen: Seen[];
  /** Connections accepted from the client. */
  sockets: Socket[];
  close(): Promise<void>;
}

type ConnectMode = 'pipe' | '407' | 'close' | 'silent' | 'garbage';

function resolve(host: string): string {
  return host.endsWith('.test') ? '127.0.0.1' : host;
}

/** A forward proxy on 127.0.0.1: CONNECT piped to the target (or answered as `mode` says), absolute-form requests forwarded. */
async function startProxy(options: { mode?: ConnectMode; tls?: boolean } = {}): Promise<TestProxy> {
  const mode = options.mode ?? 'pipe';
  const seen: Seen[] = [];
  const sockets: Socket[] = [];
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    seen.push({ line: `${req.method} ${req.url}`, authorization: req.headers['proxy-authorization'] });
    if (mode === '407') {
      req.resume();
      res.writeHead(407, { 'proxy-authenticate': 'Basic', 'content-length': 0 }).end();
      return;
    }
    const url = new URL(req.url ?? '');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    const upstream = httpRequest(
      {
        host: resolve(url.hostname),
        port: url.port || 80,
        path: `${url.pathname}${url.search}`,
        method: req.method,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const server: Server | HttpsServer = options.tls
    ? createHttpsServer({ key: tlsFixture.key, cert: tlsFixture.cert }, forward)
    : createServer(forward);
  server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => sockets.push(socket));
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({
      line: `CONNECT ${req.url} host=${req.headers.host}`,
      authorization: req.headers['proxy-authorization'],
    });
    client.on('error', () => {});
    if (mode === '407') {
      client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n',
      );
      return;
    }
    if (mode === 'close') return void client.destroy();
    if (mode === 'silent') {
      // Reading, so that it sees the client close (and closing in turn: the server allows half-open).
      client.on('end', () => client.end());
      return void client.resume();
    }
    if (mode === 'garbage') return void client.write('SSH-2.0-OpenSSH_9.6\r\n\r\n');
    const [host = '', port = ''] = (req.url ?? '').split(/:(?=\d+$)/);
    const upstream = connect(Number(port), resolve(host), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    port,
    seen,
    sockets,
    close: async () => {
      server.closeAllConnections();
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
}

/** A certificate for api.test and proxy.test, made for this run: the pool trusts it through the patched tls.connect. */
const tlsFixture = { key: Buffer.alloc(0), cert: Buffer.alloc(0), available: false, missing: '' };
let restoreTls: (() => void) | undefined;

function makeCertificate(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-proxy-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=api.test',
        '-addext',
        'subjectAltName=DNS:api.test,DNS:proxy.test,IP:10.9.8.7',
        '-keyout',
        path.join(dir, 'key.pem'),
        '-out',
        path.join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    tlsFixture.key = readFileSync(path.join(dir, 'key.pem'));
    tlsFixture.cert = readFileSync(path.join(dir, 'cert.pem'));
    tlsFixture.available = true;
  } catch (error) {
    tlsFixture.available = false;
    tlsFixture.missing = `no test certificate: openssl failed (${(error as Error).message})`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

beforeAll(() => {
  makeCertificate();
  if (!tlsFixture.available) return;
  // The pool loads node:tls with process.getBuiltinModule: the same module object as this import.
  const original = tls.connect;
  const patched = (options: tls.ConnectionOptions) => original({ ...options, ca: [tlsFixture.cert] });
  (tls as { connect: unknown }).connect = patched;
  restoreTls = () => {
    (tls as { connect: unknown }).connect = original;
  };
});
afterAll(() => restoreTls?.());

const pools: HttpPool[] = [];
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const close of closers.splice(0)) await close();
});

function newPool(env: NodeJS.ProcessEnv): HttpPool {
  const pool = createHttpPool(env);
  pools.push(pool);
  return pool;
}

async function proxy(options?: Parameters<typeof startProxy>[0]): Promise<TestProxy> {
  const started = await startProxy(options);
  closers.push(started.close);
  return started;
}

async function rawTarget(): Promise<RawServer> {
  const server = await startRawServer((request) =>
    request.socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${request.path.length}\r\n\r\n${request.path}`),
  );
  closers.push(server.close);
  return server;
}

/** An https server for api.test answering each request with its path. */
async function tlsTarget(): Promise<{ port: number; servernames: (string | false | null)[] }> {
  const servernames: (string | false | null)[] = [];
  const server = createHttpsServer({ key: tlsFixture.key, cert: tlsFixture.cert }, (req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-length': (req.url ?? '').length }).end(req.url));
  });
  server.on('secureConnection', (socket: tls.TLSSocket) => servernames.push(socket.servername));
  server.on('tlsClientError', () => {});
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  });
  return { port: (server.address() as AddressInfo).port, servernames };
}

const HEADERS = Object.freeze({ 'content-type': 'application/json', 'content-length': 2 });
const PAYLOAD = Buffer.from('{}');

async function post(pool: HttpPool, url: string, signal = new AbortController().signal): Promise<string> {
  const response = await pool.post(url, HEADERS, PAYLOAD, signal);
  return `${response.status} ${await readText(response.body)}`;
}

/** The post's failure (its message), or NO_ANSWER if it neither fails nor succeeds in time. */
async function failure(promise: Promise<unknown>): Promise<string | typeof NO_ANSWER> {
  const settled = await within(
    promise.then(
      () => 'succeeded',
      (error: Error) => error.message,
    ),
    2000,
  );
  return settled;
}

describe('https:// through HTTPS_PROXY (CONNECT)', () => {
  it('tunnels to the target: the proxy sees CONNECT host:port, TLS names the target, the tunnel is kept for the next post', async (context) => {
    if (!tlsFixture.available) return skipBecause(context, tlsFixture.missing);
    const target = await tlsTarget();
    const forward = await proxy();
    const pool = newPool({ HTTPS_PROXY: forward.url });
    expect(await post(pool, `https://api.test:${target.port}/v1/a`)).toBe('200 /v1/a');
    expect(await post(pool, `https://api.test:${target.port}/v1/b`)).toBe('200 /v1/b');
    expect(forward.seen).toEqual([
      { line: `CONNECT api.test:${target.port} host=api.test:${target.port}`, authorization: undefined },
    ]);
    expect(forward.sockets).toHaveLength(1);
    expect(target.servernames).toEqual(['api.test']);
  });

  it('lowercase https_proxy; an https:// proxy (TLS to the proxy, TLS to the target inside); credentials as Proxy-Authorization', async (context) => {
    if (!tlsFixture.available) return skipBecause(context, tlsFixture.missing);
    const target = await tlsTarget();
    const forward = await proxy({ tls: true });
    const pool = newPool({ https_proxy: `https://us%40er:p%3Ass@proxy.test:${forward.port}` });
    // proxy.test is not resolvable: point the pool's connection to it at 127.0.0.1 through the patched tls.connect.
    const patched = tls.connect;
    (tls as { connect: unknown }).connect = (options: tls.ConnectionOptions) =>
      patched(options.host === 'proxy.test' ? { ...options, host: '127.0.0.1' } : options);
    try {
      expect(await post(pool, `https://api.test:${target.port}/x`)).toBe('200 /x');
    } finally {
      (tls as { connect: unknown }).connect = patched;
    }
    expect(forward.seen).toEqual([
      {
        line: `CONNECT api.test:${target.port} host=api.test:${target.port}`,
        authorization: `Basic ${Buffer.from('us@er:p:ss').toString('base64')}`,
      },
    ]);
  });

  it('a proxy answering 407 fails the post with the proxy (credentials masked) and the status', async () => {
    const forward = await proxy({ mode: '407' });
    const pool = newPool({ HTTPS_PROXY: `http://alice:hunter2-secret@127.0.0.1:${forward.port}` });
    const message = await failure(post(pool, 'https://api.test/v1'));
    expect(message).toBe(
      `proxy http://***@127.0.0.1:${forward.port}: refused CONNECT to api.test:443: 407 Proxy Authentication Required`,
    );
    expect(forward.seen[0]?.authorization).toBe(
      `Basic ${Buffer.from('alice:hunter2-secret').toString('base64')}`,
    );
    // Registered as secrets: an echo of them anywhere axe writes is masked.
    expect(maskSecrets('hunter2-secret')).toBe('***');
  });

  it('a proxy that closes the connection, or answers with something that is not HTTP, fails the post (no hang)', async () => {
    for (const [mode, what] of [
      ['close', 'closed the connection before answering CONNECT'],
      ['garbage', 'answered CONNECT api.test:8443 with something that is not HTTP'],
    ] as const) {
      const forward = await proxy({ mode });
      const pool = newPool({ HTTPS_PROXY: `127.0.0.1:${forward.port}` });
      const error = await pool
        .post('https://api.test:8443/', HEADERS, PAYLOAD, new AbortController().signal)
        .then(
          () => undefined,
          (reason: NodeJS.ErrnoException) => reason,
        );
      expect(error?.message).toBe(`proxy http://127.0.0.1:${forward.port}: ${what}`);
      expect(error?.code).toBe('ERR_PROXY');
    }
  });

  it('a proxy that cannot be reached is named in the error, not taken for the provider', async () => {
    const forward = await proxy();
    await forward.close();
    const pool = newPool({ HTTPS_PROXY: `http://bob:s3cret-pass@127.0.0.1:${forward.port}` });
    const message = await failure(post(pool, 'https://api.test/v1'));
    expect(message).toMatch(
      new RegExp(
        `^cannot connect to proxy http://\\*\\*\\*@127\\.0\\.0\\.1:${forward.port}: connect ECONNREFUSED`,
      ),
    );
    expect(message).not.toContain('s3cret');
  });

  it('an abort while the proxy has not answered CONNECT rejects the post and closes the connection to the proxy', async () => {
    const forward = await proxy({ mode: 'silent' });
    const pool = newPool({ HTTPS_PROXY: forward.url });
    const controller = new AbortController();
    const pending = pool.post('https://api.test/v1', HEADERS, PAYLOAD, controller.signal);
    await new Promise<void>((done) => {
      const check = () => (forward.seen.length > 0 ? done() : setTimeout(check, 5));
      check();
    });
    controller.abort();
    expect(await failure(pending)).toBe('request aborted');
    expect(await within(closed(forward.sockets[0] as Socket), 2000)).not.toBe(NO_ANSWER);
  });

  it('preconnect opens the tunnel ahead: the first post goes out on it', async (context) => {
    if (!tlsFixture.available) return skipBecause(context, tlsFixture.missing);
    const target = await tlsTarget();
    const forward = await proxy();
    const pool = newPool({ HTTPS_PROXY: forward.url });
    const url = `https://api.test:${target.port}/v1`;
    pool.preconnect(url, {});
    await new Promise<void>((done) => {
      const check = () => (target.servernames.length > 0 ? done() : setTimeout(check, 5));
      check();
    });
    expect(await post(pool, url)).toBe('200 /v1');
    expect(forward.seen).toHaveLength(1);
    expect(forward.sockets).toHaveLength(1);
  });

  it('a malformed HTTPS_PROXY fails the post with the variable named and its credentials masked', async () => {
    const pool = newPool({ HTTPS_PROXY: 'http://carol:pw-in-url@proxy.example:99999' });
    const message = await failure(post(pool, 'https://api.test/v1'));
    expect(message).toBe('invalid proxy URL in HTTPS_PROXY: "http://***@proxy.example:99999" (not a URL)');
    const socks = newPool({ https_proxy: 'socks5://proxy.example:1080' });
    expect(await failure(post(socks, 'https://api.test/v1'))).toBe(
      'invalid proxy URL in https_proxy: "socks5://proxy.example:1080" (scheme "socks5" is not supported: use http:// or https://)',
    );
  });
});

describe('http:// through HTTP_PROXY (absolute form)', () => {
  it('sends the request to the proxy in absolute form with Proxy-Authorization; the connection is kept', async () => {
    const target = await rawTarget();
    const forward = await proxy();
    const pool = newPool({ http_proxy: `http://dave:pa%20ss@127.0.0.1:${forward.port}` });
    expect(await post(pool, `http://api.test:${target.port}/v1/a?q=1`)).toBe('200 /v1/a?q=1');
    expect(await post(pool, `http://api.test:${target.port}/v1/b`)).toBe('200 /v1/b');
    const authorization = `Basic ${Buffer.from('dave:pa ss').toString('base64')}`;
    expect(forward.seen).toEqual([
      { line: `POST http://api.test:${target.port}/v1/a?q=1`, authorization },
      { line: `POST http://api.test:${target.port}/v1/b`, authorization },
    ]);
    expect(forward.sockets).toHaveLength(1);
    // The target got the Host of the URL, and no Proxy-Authorization (the proxy removed it).
    expect(target.requests[0]?.head).toMatch(new RegExp(`\\r\\nhost: api\\.test:${target.port}\\r\\n`, 'i'));
  });

  it('HTTP_PROXY is not used for https://, nor HTTPS_PROXY for http://', async () => {
    const forward = await proxy({ mode: '407' });
    const attempt = (env: NodeJS.ProcessEnv, url: string) =>
      newPool(env)
        .post(url, HEADERS, PAYLOAD, AbortSignal.timeout(300))
        .then(
          (response) => response.body.resume(),
          () => {},
        );
    await attempt({ HTTPS_PROXY: forward.url }, 'http://10.9.8.7:1/');
    await attempt({ HTTP_PROXY: forward.url }, 'https://10.9.8.7:1/');
    expect(forward.seen).toEqual([]);
    await attempt({ HTTP_PROXY: forward.url }, 'http://10.9.8.7:1/');
    expect(forward.seen).toEqual([{ line: 'POST http://10.9.8.7:1/', authorization: undefined }]);
  });
});

describe('what goes direct', () => {
  it('loopback and localhost are never proxied, whatever the variables say', async () => {
    const target = await rawTarget();
    const forward = await proxy({ mode: '407' });
    const pool = newPool({ HTTP_PROXY: forward.url, HTTPS_PROXY: forward.url });
    expect(await post(pool, target.url('/a'))).toBe('200 /a');
    expect(await post(pool, `http://localhost:${target.port}/b`)).toBe('200 /b');
    expect(await post(pool, `http://[::1]:${target.port}/c`).catch(() => 'direct')).toMatch(/200 \/c|direct/);
    expect(await post(pool, `https://127.8.9.10:${target.port}/d`).catch(() => 'direct')).toBe('direct');
    expect(forward.seen).toEqual([]);
    // The same pool sends a request to any other host through the proxy.
    expect(await post(pool, `http://api.test:${target.port}/e`)).toBe('407 ');
    expect(forward.seen).toHaveLength(1);
  });

  it('NO_PROXY: a host, a .domain suffix, *.domain, a host:port, an IP, a CIDR range, *', async () => {
    const forward = await proxy({ mode: '407' });
    /** Whether a post to `url` went through the proxy (which answers 407 to everything). */
    const proxied = async (noProxy: string, url: string, variable = 'NO_PROXY') => {
      const before = forward.seen.length;
      const pool = newPool({ HTTPS_PROXY: forward.url, [variable]: noProxy });
      const signal = AbortSignal.timeout(300);
      await pool.post(url, HEADERS, PAYLOAD, signal).then(
        (response) => response.body.resume(),
        () => {},
      );
      return forward.seen.length > before;
    };
    // A domain matches itself and its subdomains, case-insensitively.
    expect(await proxied('example.com', 'https://example.com.invalid:1/')).toBe(true);
    expect(await proxied(' Example.COM ', 'https://api.example.com:1/')).toBe(false);
    expect(await proxied('other.org,example.com', 'https://example.com:1/')).toBe(false);
    expect(await proxied('example.com', 'https://notexample.com:1/')).toBe(true);
    // A leading dot or *.: subdomains only.
    expect(await proxied('.example.com', 'https://api.example.com:1/')).toBe(false);
    expect(await proxied('.example.com', 'https://example.com:1/')).toBe(true);
    expect(await proxied('*.example.com', 'https://a.b.example.com:1/')).toBe(false);
    // With a port, only that port (443 for an https:// URL without one).
    expect(await proxied('example.com:443', 'https://api.example.com/')).toBe(false);
    expect(await proxied('example.com:8443', 'https://api.example.com/')).toBe(true);
    // IP addresses and CIDR ranges.
    expect(await proxied('10.9.8.7', 'https://10.9.8.7:1/')).toBe(false);
    expect(await proxied('10.0.0.0/8', 'https://10.9.8.7:1/')).toBe(false);
    expect(await proxied('10.0.0.0/16', 'https://10.9.8.7:1/')).toBe(true);
    expect(await proxied('[fd00::1]:1', 'https://[fd00::1]:1/')).toBe(false);
    // Everything.
    expect(await proxied('*', 'https://api.example.com:1/')).toBe(false);
    // no_proxy when NO_PROXY is not set.
    expect(await proxied('example.com', 'https://api.example.com:1/', 'no_proxy')).toBe(false);
  });

  it('the environment is read when the pool is made: process.env by default', async () => {
    const forward = await proxy({ mode: '407' });
    const saved = { ...process.env };
    try {
      process.env.HTTPS_PROXY = forward.url;
      delete process.env.NO_PROXY;
      delete process.env.no_proxy;
      const pool = createHttpPool();
      pools.push(pool);
      process.env.HTTPS_PROXY = '';
      expect(await failure(post(pool, 'https://api.test/v1'))).toMatch(/407/);
    } finally {
      for (const name of ['HTTPS_PROXY', 'NO_PROXY', 'no_proxy']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});
