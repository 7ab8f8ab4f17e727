import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fanOut } from '../../internal/fanout/fanout.js';
import { createLimiter } from '../../internal/runner/limiter.js';

interface Deferred {
  resolve: () => void;
  promise: Promise<void>;
}

function deferred(): Deferred {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { resolve, promise };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('fanOut', () => {
  it('returns every result in call order whatever the completion order and failures', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ fail: fc.boolean(), rank: fc.nat() }), { minLength: 1, maxLength: 24 }),
        fc.integer({ min: 1, max: 8 }),
        async (calls, limit) => {
          const limiter = createLimiter(limit);
          const gates = calls.map(() => deferred());
          let running = 0;
          let peak = 0;
          const run = fanOut(
            calls,
            (call, index) =>
              limiter.run(async () => {
                running++;
                peak = Math.max(peak, running);
                await gates[index]?.promise;
                running--;
                if (call.fail) throw new Error(`failed ${index}`);
                return `ok ${index}`;
              }),
            { parallel: true },
          );
          // Release the calls in a random order, letting each started one run to its gate.
          const order = calls
            .map((call, index) => ({ index, rank: call.rank }))
            .sort((a, b) => a.rank - b.rank);
          for (const { index } of order) {
            await flush();
            gates[index]?.resolve();
          }
          const results = await run;
          expect(results).toHaveLength(calls.length);
          results.forEach((result, index) => {
            if (calls[index]?.fail) {
              expect(result).toEqual({ status: 'rejected', reason: new Error(`failed ${index}`) });
            } else {
              expect(result).toEqual({ status: 'fulfilled', value: `ok ${index}` });
            }
          });
          expect(peak).toBeLessThanOrEqual(limit);
          expect(limiter.active()).toBe(0);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('runs strictly one after another when parallel is false, and a failure does not stop the rest', async () => {
    const events: string[] = [];
    const results = await fanOut(
      [0, 1, 2],
      async (n) => {
        events.push(`start ${n}`);
        await flush();
        events.push(`end ${n}`);
        if (n === 1) throw new Error('boom');
        return n;
      },
      { parallel: false },
    );
    expect(events).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('starts a wide turn 32 calls per turn of the event loop, in order, with every result in order', async () => {
    const started: number[] = [];
    const gate = deferred();
    const calls = Array.from({ length: 100 }, (_, n) => n);
    const run = fanOut(
      calls,
      (n) => {
        started.push(n);
        return gate.promise.then(() => n);
      },
      { parallel: true },
    );
    const seen: number[] = [started.length];
    while (started.length < calls.length) {
      await flush();
      seen.push(started.length);
    }
    expect(seen).toEqual([32, 64, 96, 100]);
    expect(started).toEqual(calls);
    gate.resolve();
    expect((await run).map((r) => (r.status === 'fulfilled' ? r.value : -1))).toEqual(calls);
  });

  it('a call that fails while later calls wait for their turn is a rejected result, not an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const calls = Array.from({ length: 70 }, (_, n) => n);
      const results = await fanOut(
        calls,
        async (n) => {
          if (n === 0 || n === 40) throw new Error(`call ${n} failed`);
          return n;
        },
        { parallel: true },
      );
      await flush();
      expect(unhandled).toEqual([]);
      expect(results.filter((r) => r.status === 'rejected').map((r) => String(r.reason))).toEqual([
        'Error: call 0 failed',
        'Error: call 40 failed',
      ]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('starts every call at once when parallel, and turns a synchronous throw into a rejection', async () => {
    const started: number[] = [];
    const gate = deferred();
    const run = fanOut(
      [0, 1, 2],
      (n) => {
        started.push(n);
        if (n === 2) throw new Error('sync');
        return gate.promise.then(() => n);
      },
      { parallel: true },
    );
    expect(started).toEqual([0, 1, 2]);
    gate.resolve();
    const results = await run;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
  });
});

describe('fanOut with barriers (calls that change something)', () => {
  it('a barrier runs alone: after every earlier call, before every later one; the rest overlap', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ barrier: fc.boolean(), rank: fc.nat() }), { minLength: 1, maxLength: 16 }),
        async (calls) => {
          const gates = calls.map(() => deferred());
          // One clock for starts and ends, so they compare.
          let tick = 0;
          const startedAt = new Map<number, number>();
          const finishedAt = new Map<number, number>();
          const run = fanOut(
            calls,
            async (_call, index) => {
              startedAt.set(index, tick++);
              await gates[index]?.promise;
              finishedAt.set(index, tick++);
              return index;
            },
            { parallel: true, barrier: (call) => call.barrier },
          );
          // Release started calls one at a time, by rank, until all are done.
          while (finishedAt.size < calls.length) {
            await flush();
            const next = [...startedAt.keys()]
              .filter((i) => !finishedAt.has(i))
              .sort((a, b) => (calls[a]?.rank ?? 0) - (calls[b]?.rank ?? 0))[0];
            if (next === undefined) throw new Error('nothing running: the fan-out is stuck');
            gates[next]?.resolve();
            await flush();
          }
          expect((await run).map((r) => (r.status === 'fulfilled' ? r.value : -1))).toEqual(
            calls.map((_, i) => i),
          );
          const start = (i: number) => startedAt.get(i) ?? Number.NaN;
          const end = (i: number) => finishedAt.get(i) ?? Number.NaN;
          let segmentStart = 0;
          calls.forEach((call, i) => {
            if (call.barrier) {
              // Alone: every earlier call ended before it started, every later one starts after it ended.
              for (let before = 0; before < i; before++) expect(end(before)).toBeLessThan(start(i));
              for (let after = i + 1; after < calls.length; after++)
                expect(start(after)).toBeGreaterThan(end(i));
              segmentStart = i + 1;
            } else if (i > segmentStart) {
              // Calls with no barrier between them all start before the first of them ends.
              expect(start(i)).toBeLessThan(end(segmentStart));
            }
          });
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe('fanOut: a wide turn with a barrier', () => {
  it('a barrier past the first 32 calls still runs alone, and every result comes back in order', async () => {
    const calls = Array.from({ length: 70 }, (_, n) => n);
    const barrier = 40;
    let tick = 0;
    const startedAt: number[] = [];
    const finishedAt: number[] = [];
    const results = await fanOut(
      calls,
      async (n) => {
        startedAt[n] = tick++;
        await flush();
        finishedAt[n] = tick++;
        return n;
      },
      { parallel: true, barrier: (n) => n === barrier },
    );
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : -1))).toEqual(calls);
    const start = (n: number) => startedAt[n] ?? Number.NaN;
    const end = (n: number) => finishedAt[n] ?? Number.NaN;
    for (let n = 0; n < barrier; n++) expect(end(n)).toBeLessThan(start(barrier));
    for (let n = barrier + 1; n < calls.length; n++) expect(start(n)).toBeGreaterThan(end(barrier));
    // The first 32 start in one turn, before any of them ends.
    for (let n = 1; n < 32; n++) expect(start(n)).toBeLessThan(end(0));
  });
});

describe('createLimiter', () => {
  it('queues the excess first-in-first-out and never fails it', async () => {
    const limiter = createLimiter(2);
    const gates = [0, 1, 2, 3, 4].map(() => deferred());
    const started: number[] = [];
    const runs = gates.map((gate, index) =>
      limiter.run(async () => {
        started.push(index);
        await gate.promise;
        return index;
      }),
    );
    await flush();
    expect(started).toEqual([0, 1]);
    expect(limiter.queued()).toBe(3);
    gates[1]?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2, 3]);
    for (const gate of gates) gate.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(limiter.active()).toBe(0);
    expect(limiter.queued()).toBe(0);
  });

  it('drops waiting work whose signal fires, without taking a slot', async () => {
    const limiter = createLimiter(1);
    const gate = deferred();
    const first = limiter.run(() => gate.promise);
    const controller = new AbortController();
    const ran: string[] = [];
    const dropped = limiter.run(async () => ran.push('dropped'), controller.signal);
    const next = limiter.run(async () => ran.push('next'));
    controller.abort(new Error('gave up'));
    await expect(dropped).rejects.toThrow('gave up');
    expect(limiter.queued()).toBe(1);
    gate.resolve();
    await Promise.all([first, next]);
    expect(ran).toEqual(['next']);
    expect(limiter.active()).toBe(0);
  });

  it('frees the slot of work that throws', async () => {
    const limiter = createLimiter(1);
    await expect(limiter.run(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(await limiter.run(async () => 'next')).toBe('next');
  });

  it('frees the slot of work that throws before it returns a promise, and rejects with that error', async () => {
    const limiter = createLimiter(1);
    const work = (): Promise<string> => {
      throw new Error('at once');
    };
    await expect(limiter.run(work)).rejects.toThrow('at once');
    expect(limiter.active()).toBe(0);
    expect(await limiter.run(async () => 'next')).toBe('next');
  });
});
