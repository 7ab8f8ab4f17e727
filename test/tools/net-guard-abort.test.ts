import dnsPromises from 'node:dns/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { checkUrl, type HostPolicy, NetGuardError } from '../../internal/tools/net-guard.js';
import { fetchUrl, urlFetchTool } from '../../internal/tools/url-fetch.js';
import { call, toolContext } from './helpers.js';

/**
 * url_fetch resolves the host before connecting. A resolver that never answers held that lookup
 * for getaddrinfo's own timeouts (10 s and more) whatever the run's deadline, Ctrl-C or
 * url_fetch's 15 s limit said. The system resolver is left alone: `dns.promises.lookup` is
 * replaced by one that never settles (or answers what a test says).
 */
const PUBLIC: HostPolicy = { allowedHosts: [], allowLoopback: false };

/** Makes every `dns.promises.lookup` hang; returns how many were started. */
function hangingLookup(): () => number {
  const spy = vi.spyOn(dnsPromises, 'lookup').mockImplementation(() => new Promise<never>(() => {}));
  return () => spy.mock.calls.length;
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('checkUrl: the DNS lookup honours the signal', () => {
  it('an abort during the lookup rejects at once with the signal reason', async () => {
    const lookups = hangingLookup();
    const controller = new AbortController();
    const reason = new Error('interrupted');
    setTimeout(() => controller.abort(reason), 100);
    await expect(checkUrl(new URL('https://hangs.example/'), PUBLIC, controller.signal)).rejects.toBe(reason);
    expect(lookups()).toBe(1);
  });

  it('a signal aborted before the call rejects with its reason without a lookup', async () => {
    const lookups = hangingLookup();
    const reason = new Error('already over');
    await expect(checkUrl(new URL('https://hangs.example/'), PUBLIC, AbortSignal.abort(reason))).rejects.toBe(
      reason,
    );
    expect(lookups()).toBe(0);
  });

  it('answers, refusals and lookup errors are unchanged with a signal', async () => {
    const signal = new AbortController().signal;
    const spy = vi.spyOn(dnsPromises, 'lookup');
    spy.mockResolvedValueOnce([{ address: '93.184.215.14', family: 4 }] as never);
    await expect(checkUrl(new URL('https://ok.example/'), PUBLIC, signal)).resolves.toMatchObject({
      address: '93.184.215.14',
      family: 4,
    });
    spy.mockResolvedValueOnce([{ address: '10.0.0.1', family: 4 }] as never);
    await expect(checkUrl(new URL('https://inner.example/'), PUBLIC, signal)).rejects.toThrow(
      /host "inner\.example" resolves to 10\.0\.0\.1, which is a private address: refused/,
    );
    spy.mockRejectedValueOnce(Object.assign(new Error('nope'), { code: 'ENOTFOUND' }));
    const failed = checkUrl(new URL('https://missing.example/'), PUBLIC, signal);
    await expect(failed).rejects.toBeInstanceOf(NetGuardError);
    await expect(failed).rejects.toThrow('cannot resolve host "missing.example": ENOTFOUND');
  });

  it('still resolves through the system lookup: /etc/hosts names such as localhost', async () => {
    const target = await checkUrl(
      new URL('http://localhost:1/'),
      { allowedHosts: [], allowLoopback: true },
      new AbortController().signal,
    );
    expect(target.address).toMatch(/^(127\.|::1$)/);
  });
});

describe('url_fetch: a lookup that never answers', () => {
  it("ends at url_fetch's own time limit", async () => {
    hangingLookup();
    await expect(fetchUrl('http://hangs.example/page', toolContext('/tmp'), 300)).rejects.toThrow(
      'url_fetch timed out after 0.3s: http://hangs.example/page',
    );
  });

  it('ends when the run does (deadline, Ctrl-C)', async () => {
    hangingLookup();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('run ended')), 200);
    const out = await call(
      urlFetchTool,
      { url: 'http://hangs.example/' },
      toolContext('/tmp', { signal: controller.signal }),
    );
    expect(out).toEqual({ content: 'url_fetch: cancelled', isError: true });
  });
});
