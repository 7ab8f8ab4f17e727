import { describe, expect, it } from 'vitest';
import { RateGate } from '../../internal/ratelimit/gate.js';
import { RateGates } from '../../internal/ratelimit/gates.js';
import { readRateHeaders, resetIn } from '../../internal/ratelimit/headers.js';

const open = () => new AbortController().signal;

describe('the rate headers', () => {
  it('reads Anthropic’s and OpenAI’s remaining requests and tokens, and their resets', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(
      readRateHeaders(
        {
          'anthropic-ratelimit-requests-remaining': '3',
          'anthropic-ratelimit-requests-reset': '2026-11-21T10:00:02Z',
          'anthropic-ratelimit-tokens-remaining': '9000',
          'anthropic-ratelimit-tokens-reset': '2026-11-21T10:00:30Z',
          'retry-after': '4',
        },
        now,
      ),
    ).toEqual({
      retryAfterMs: 4000,
      requests: { remaining: 3, resetMs: 2000 },
      tokens: { remaining: 9000, resetMs: 30_000 },
    });
    expect(
      readRateHeaders(
        {
          'x-ratelimit-remaining-requests': '59',
          'x-ratelimit-reset-requests': '1s',
          'x-ratelimit-remaining-tokens': '149984',
          'x-ratelimit-reset-tokens': '6m0s',
        },
        now,
      ),
    ).toEqual({
      requests: { remaining: 59, resetMs: 1000 },
      tokens: { remaining: 149984, resetMs: 360_000 },
    });
    expect(readRateHeaders({ 'x-ratelimit-remaining-requests': 'many' }, now)).toEqual({});
  });

  it('reads every form of a reset', () => {
    const now = 0;
    expect(resetIn('20ms', now)).toBe(20);
    expect(resetIn('1h2m3.5s', now)).toBe(3_723_500);
    expect(resetIn('2', now)).toBe(2000);
    expect(resetIn('1970-01-01T00:00:01.500Z', now)).toBe(1500);
    expect(resetIn('soon', now)).toBeUndefined();
  });
});

describe('a rate gate', () => {
  it('with nothing to keep, admits at once: no promise', () => {
    const gate = new RateGate();
    for (let i = 0; i < 100; i++) {
      expect(gate.admit(1000, open())).toBeUndefined();
      gate.done(200, {});
    }
  });

  it('a 429 with retry-after holds back every request until the stated time, then lets them go in order', async () => {
    const gates = new RateGates();
    const gate = gates.gate('anthropic');
    expect(gate.admit(1, open())).toBeUndefined();
    const refusedAt = Date.now();
    gate.done(429, { 'retry-after-ms': '40' });
    const order: number[] = [];
    const waits = [0, 1, 2].map((i) => {
      const wait = gate.admit(1, open());
      expect(wait).toBeInstanceOf(Promise);
      return wait?.then(() => order.push(i) && Date.now());
    });
    const times = (await Promise.all(waits)) as number[];
    expect(order).toEqual([0, 1, 2]);
    // A timer may fire up to a millisecond early (Node rounds): never sooner than that.
    for (const time of times) expect(time - refusedAt).toBeGreaterThanOrEqual(39);
    // Another provider's gate was not held.
    expect(gates.gate('openai').admit(1, open())).toBeUndefined();
    expect(gates.refused).toBe(1);
  });

  it('counts down the requests a server says are left, and waits for its reset before going over', async () => {
    const gate = new RateGate();
    expect(gate.admit(1, open())).toBeUndefined();
    const toldAt = Date.now();
    gate.done(200, { 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '40ms' });
    expect(gate.admit(1, open())).toBeUndefined();
    expect(gate.admit(1, open())).toBeUndefined();
    const third = gate.admit(1, open());
    expect(third).toBeInstanceOf(Promise);
    await third;
    expect(Date.now() - toldAt).toBeGreaterThanOrEqual(39);
  });

  it('keeps rpm by hand, and a waiting request leaves when its signal fires', async () => {
    // 600 a minute: ten a second, the bucket holding one second's worth.
    const gate = new RateGate({ rpm: 600 });
    for (let i = 0; i < 10; i++) expect(gate.admit(1, open())).toBeUndefined();
    const controller = new AbortController();
    const waiting = gate.admit(1, controller.signal);
    expect(waiting).toBeInstanceOf(Promise);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    // The next one still gets its turn once the bucket has a request again (100 ms).
    await gate.admit(1, open());
  });
});
