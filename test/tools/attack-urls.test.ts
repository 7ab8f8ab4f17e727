import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { forbiddenReason } from '../../internal/tools/ip-ranges.js';
import { expectRefused } from './attack-box.js';
import { type CountingServer, startCountingServer } from './counting-server.js';
import { call, toolContext, waitFor } from './helpers.js';

/**
 * Escape attempts through `url_fetch`: forbidden addresses in every spelling, redirects to them,
 * hosts outside `allowed_hosts`. None may open a connection. Spellings of this machine's loopback
 * address are first dialled unguarded to prove they really reach the local server; the other
 * private ranges are never dialled (no traffic may leave the loopback), only classified.
 */
const { url_fetch } = BUILTIN_TOOLS;
const LOOPBACK_OPT_IN = { AXE_ALLOW_PRIVATE_HOSTS: '1' };
let server: CountingServer;
let other: CountingServer;
beforeAll(async () => {
  server = await startCountingServer((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
    if (to) {
      res.writeHead(302, { location: to.replace('OTHER', String(other.port)) });
      res.end();
    } else res.end('reached');
  });
  other = await startCountingServer();
});
afterAll(async () => {
  await server.close();
  await other.close();
});

/** An unguarded TCP connection to the URL's host and port: true when it reached `server`. */
async function dialsLocalServer(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const before = server.connections();
  const host = hostname.replace(/^\[|\]$/g, '');
  const connected = await new Promise<boolean>((resolve) => {
    const socket = connect({ host, port: Number(port), autoSelectFamily: true, timeout: 2000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
  return connected && (await waitFor(() => server.connections() === before + 1));
}

const withPort = (url: string) => url.replace('PORT', String(server.port));

describe('url_fetch: this machine in every spelling (each proven to reach it unguarded)', () => {
  const local: [string, RegExp][] = [
    ['http://127.0.0.1:PORT/', /address 127\.0\.0\.1 is a loopback address/],
    [
      'http://localhost:PORT/',
      /host "localhost" resolves to (127\.0\.0\.1|::1), which is a loopback address/,
    ],
    ['http://2130706433:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://0x7f.1:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://017700000001:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://127.1:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://[::ffff:127.0.0.1]:PORT/', /::ffff:7f00:1 is a loopback/],
    ['http://0.0.0.0:PORT/', /0\.0\.0\.0 is a this-network address/],
  ];
  it.each(local)('refuses %s without connecting', async (spelling, refusal) => {
    const url = withPort(spelling);
    expect(await dialsLocalServer(new URL(url).href)).toBe(true);
    const before = server.connections();
    expectRefused(await call(url_fetch, { url }, toolContext('/tmp')), refusal);
    expect(server.connections()).toBe(before);
  });
});

describe('url_fetch: other forbidden ranges (classified, never dialled)', () => {
  const forbidden: [string, RegExp][] = [
    ['http://[::1]/', /::1 is a loopback/],
    ['http://[::]/', /is a unspecified address/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local/],
    ['http://[::ffff:a9fe:a9fe]/', /link-local/],
    ['http://10.1.2.3/', /private/],
    ['http://172.16.0.1/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://224.0.0.1/', /multicast/],
    ['http://255.255.255.255/', /reserved/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fd00::1]/', /unique local/],
    ['http://[64:ff9b::7f00:1]/', /loopback/],
    ['http://[2002:7f00:1::]/', /loopback/],
    ['file:///etc/passwd', /unsupported scheme "file"/],
  ];
  it.each(forbidden)('refuses %s', async (url, refusal) => {
    expectRefused(await call(url_fetch, { url }, toolContext('/tmp')), refusal);
  });
});

describe('url_fetch: redirects and allowed_hosts', () => {
  it('re-checks every redirect hop: a redirect to a private address is refused before connecting', async () => {
    for (const to of ['http://169.254.169.254/', 'http://10.0.0.1/', 'http://[::ffff:192.168.0.1]/']) {
      const url = `${server.url}/?to=${encodeURIComponent(to)}`;
      const out = await call(url_fetch, { url }, toolContext('/tmp', { env: LOOPBACK_OPT_IN }));
      expectRefused(out, /refused/);
    }
  });

  it('a redirect to a host outside allowed_hosts is refused and never reached', async () => {
    const url = `${server.url}/?to=${encodeURIComponent('http://localhost:OTHER/')}`;
    const unguarded = await call(url_fetch, { url }, toolContext('/tmp', { env: LOOPBACK_OPT_IN }));
    expect(unguarded).toEqual({ content: 'reached', isError: false });
    const before = other.connections();
    const out = await call(
      url_fetch,
      { url },
      toolContext('/tmp', { env: LOOPBACK_OPT_IN, allowedHosts: ['127.0.0.1'] }),
    );
    expectRefused(out, /host "localhost" is not in allowed_hosts/);
    expect(other.connections()).toBe(before);
  });

  it('the loopback opt-in opens loopback only, not the other private ranges', async () => {
    const ctx = toolContext('/tmp', { env: LOOPBACK_OPT_IN });
    expect(await call(url_fetch, { url: `${server.url}/` }, ctx)).toEqual({
      content: 'reached',
      isError: false,
    });
    expectRefused(await call(url_fetch, { url: 'http://192.168.0.1/' }, ctx), /private/);
    expectRefused(await call(url_fetch, { url: withPort('http://0.0.0.0:PORT/') }, ctx), /this-network/);
  });
});

describe('address classification (properties)', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  it('every 127/8, 10/8 and 169.254/16 address is refused, also IPv4-mapped', () => {
    fc.assert(
      fc.property(fc.constantFrom('127', '10', '169.254'), octet, octet, octet, (prefix, a, b, c) => {
        const v4 = [...prefix.split('.'), a, b, c].slice(0, 4).join('.');
        const [w, x, y, z] = v4.split('.').map(Number) as [number, number, number, number];
        const mapped = `::ffff:${((w << 8) | x).toString(16)}:${((y << 8) | z).toString(16)}`;
        return forbiddenReason(v4) !== undefined && forbiddenReason(mapped) !== undefined;
      }),
    );
  });

  it('public addresses pass', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '93.184.216.34']) {
      expect(forbiddenReason(address)).toBeUndefined();
    }
  });
});
