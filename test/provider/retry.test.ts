import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { sleep } from '../../internal/abort.js';
import { ProviderError, type ProviderErrorCategory } from '../../internal/errors.js';
import { backoffDelay, nextRetryDelay, retryAfterMs } from '../../internal/provider/retry.js';
import type { RetryPolicy } from '../../internal/provider/types.js';

const policy: RetryPolicy = { maxRetries: 3, backoff: 'exponential', initialDelayMs: 100, maxDelayMs: 1000 };
const noJitter = () => 0;
const error = (
  category: ProviderErrorCategory,
  extra: { retryAfterMs?: number; shouldRetry?: boolean } = {},
) => new ProviderError('x', { category, provider: 'p', ...extra });

describe('retry-after headers', () => {
  it('reads retry-after-ms, seconds and HTTP dates', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(retryAfterMs({ 'retry-after-ms': '250.5' }, now)).toBe(250.5);
    expect(retryAfterMs({ 'retry-after-ms': '40', 'retry-after': '9' }, now)).toBe(40);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': 'Sat, 21 Nov 2026 10:00:03 GMT' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });
});

describe('backoff', () => {
  it('exponential, linear and fixed, capped at maxDelayMs, jitter takes off at most 25 %', () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(policy, n, noJitter))).toEqual([100, 200, 400, 800, 1000]);
    expect([1, 2, 3].map((n) => backoffDelay({ ...policy, backoff: 'linear' }, n, noJitter))).toEqual([
      100, 200, 300,
    ]);
    expect([1, 2, 3].map((n) => backoffDelay({ ...policy, backoff: 'fixed' }, n, noJitter))).toEqual([
      100, 100, 100,
    ]);
    expect(backoffDelay(policy, 1, () => 0.999)).toBe(75);
  });

  it('retries rate_limit, overloaded and server only, within the retry count', () => {
    for (const category of ['rate_limit', 'overloaded', 'server'] as const) {
      expect(nextRetryDelay(error(category), policy, 1, 0, undefined, noJitter)).toBe(100);
    }
    for (const category of ['auth', 'bad_request', 'timeout', 'cancelled'] as const) {
      expect(nextRetryDelay(error(category), policy, 1, 0, undefined, noJitter)).toBeUndefined();
    }
    expect(nextRetryDelay(error('server'), policy, 4, 0, undefined, noJitter)).toBeUndefined();
  });

  it('honours the server wait and x-should-retry, and never waits past the deadline', () => {
    expect(nextRetryDelay(error('rate_limit', { retryAfterMs: 700 }), policy, 1, 0, undefined)).toBe(700);
    expect(
      nextRetryDelay(error('rate_limit', { retryAfterMs: 5000 }), policy, 1, 0, undefined),
    ).toBeUndefined();
    expect(nextRetryDelay(error('server', { shouldRetry: false }), policy, 1, 0, undefined)).toBeUndefined();
    expect(nextRetryDelay(error('server'), policy, 1, 1000, 1100, noJitter)).toBeUndefined();
    expect(nextRetryDelay(error('server'), policy, 1, 1000, 1101, noJitter)).toBe(100);
  });
});

describe('the wait before a retry', () => {
  it('200 children waiting on their agent signal: one listener on it; an abort ends every wait, the time up ends it with none left', async () => {
    const controller = new AbortController();
    const waits = Array.from({ length: 200 }, () =>
      sleep(60_000, controller.signal).catch((reason) => reason),
    );
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('stop'));
    expect(new Set((await Promise.all(waits)).map((reason) => (reason as Error).message))).toEqual(
      new Set(['stop']),
    );
    const other = new AbortController();
    await sleep(5, other.signal);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });
});
