import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Budget } from '../../internal/budget/budget.js';
import { BudgetError, UnpricedModelError } from '../../internal/errors.js';
import type { ChatRequest } from '../../internal/provider/types.js';

/** A request whose estimate is `tokens` (its JSON's characters / 4, plus its max_tokens). */
function costing(tokens: number): ChatRequest {
  const request: ChatRequest = { model: 'm', system: '', messages: [], maxTokens: 0, stream: false };
  return { ...request, maxTokens: tokens - Math.ceil(JSON.stringify(request).length / 4) };
}

/** Settles on the next macrotask: every promise a release settled has run its callbacks. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the token budget', () => {
  it('a release starts the waiting calls that now fit, oldest first, a smaller one passing one that does not; the rest keep waiting', async () => {
    const budget = new Budget(100);
    const signal = new AbortController().signal;
    const a = await budget.reserve(costing(50), signal);
    const b = await budget.reserve(costing(40), signal);
    const started: string[] = [];
    const wait = (name: string, tokens: number) =>
      budget.reserve(costing(tokens), signal).then((release) => {
        started.push(name);
        return release;
      });
    const big = wait('big', 70);
    const small = wait('small', 20);
    const last = wait('last', 25);
    await settle();
    expect(started).toEqual([]);
    // 50 in flight: 70 does not fit (120); 20 does (70), and then 25 (95).
    b();
    await settle();
    expect(started).toEqual(['small', 'last']);
    a();
    await settle();
    // 45 in flight: 70 still does not fit (115); once 20 more are released it does (95).
    expect(started).toEqual(['small', 'last']);
    (await small)();
    await settle();
    expect(started).toEqual(['small', 'last', 'big']);
    (await last)();
    (await big)();
  });

  it('once the tree has spent it, every waiting call fails with the BudgetError at the next release', async () => {
    const budget = new Budget(100);
    const signal = new AbortController().signal;
    const running = await budget.reserve(costing(80), signal);
    const waiting = Array.from({ length: 5 }, () => budget.reserve(costing(50), signal).catch((e) => e));
    budget.add({ inputTokens: 90, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 });
    running();
    const errors = await Promise.all(waiting);
    expect(errors.every((error) => error instanceof BudgetError)).toBe(true);
    await expect(budget.reserve(costing(1), signal)).rejects.toBeInstanceOf(BudgetError);
  });

  it('an abort takes a waiting call out (its reason), leaving no listener; the others still start', async () => {
    const budget = new Budget(100);
    const running = await budget.reserve(costing(100), new AbortController().signal);
    const controller = new AbortController();
    const aborted = budget.reserve(costing(50), controller.signal).catch((reason) => reason);
    const kept = budget.reserve(costing(50), new AbortController().signal);
    controller.abort(new Error('stop'));
    expect(((await aborted) as Error).message).toBe('stop');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    running();
    (await kept)();
  });

  it('unlimited: nothing waits', async () => {
    const budget = new Budget(0);
    const releases = await Promise.all(
      Array.from({ length: 3 }, () => budget.reserve(costing(1e9), new AbortController().signal)),
    );
    for (const release of releases) release();
    expect(budget.overrun()).toBeUndefined();
  });
});

describe('a dollar cap and a shared parent', () => {
  /** $1 per million tokens in and out: a call's estimate in dollars is its tokens / 1e6. */
  const dollar = { input: 1, output: 1 };
  const usage = (tokens: number) => ({
    inputTokens: tokens,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
  });

  it('reserves dollars at the call’s price, and fails the waiting calls once the dollars are spent', async () => {
    const budget = new Budget({ maxCostUsd: 0.0001 });
    const signal = new AbortController().signal;
    expect(budget.needsPrice).toBe(true);
    const running = await budget.reserve(costing(80), signal, dollar);
    // $0.00008 in flight: a call of $0.00005 more does not fit $0.0001.
    const waiting = budget.reserve(costing(50), signal, dollar).catch((error) => error);
    budget.add(usage(120), dollar);
    running();
    const error = await waiting;
    expect(error).toBeInstanceOf(BudgetError);
    expect((error as BudgetError).unit).toBe('usd');
    expect((error as BudgetError).message).toBe('budget exceeded: used $0.0001 of $0.0001');
    expect(budget.usedUsd).toBeCloseTo(0.00012, 12);
    expect(budget.exhausted).toBe(true);
    expect(budget.overrun()?.unit).toBe('usd');
  });

  it('refuses a call with no price under a dollar cap before it is sent', async () => {
    const budget = new Budget({ maxCostUsd: 5 });
    await expect(budget.reserve(costing(10), new AbortController().signal)).rejects.toBeInstanceOf(
      UnpricedModelError,
    );
    // A child of a capped parent needs prices too.
    const child = new Budget(undefined, budget);
    expect(child.needsPrice).toBe(true);
    await expect(child.reserve(costing(10), new AbortController().signal)).rejects.toBeInstanceOf(
      UnpricedModelError,
    );
  });

  it('a call reserves in its own budget and in the shared one: trees wait for each other, and stop together', async () => {
    const shared = new Budget({ maxTokens: 100 });
    const a = new Budget(undefined, shared);
    const b = new Budget(1000, shared);
    const signal = new AbortController().signal;
    const first = await a.reserve(costing(80), signal);
    let started = false;
    const second = b.reserve(costing(50), signal).then(
      (release) => {
        started = true;
        return release;
      },
      (error: unknown) => error,
    );
    await settle();
    // b's own 1,000 tokens would let it start; the shared 100 do not (80 in flight).
    expect(started).toBe(false);
    a.add(usage(110));
    expect(shared.used).toBe(110);
    expect(a.used).toBe(110);
    first();
    expect(await second).toBeInstanceOf(BudgetError);
    expect(shared.exhausted).toBe(true);
    expect(b.exhausted).toBe(true);
    // Each tree's own budget was not overrun: the shared one was.
    expect(a.overrun()).toBeUndefined();
    expect(b.overrun()).toBeUndefined();
    expect(shared.overrun()).toBeInstanceOf(BudgetError);
    await expect(a.reserve(costing(1), signal)).rejects.toBeInstanceOf(BudgetError);
  });

  it('a call that stops waiting for the shared budget gives back what it held in its own', async () => {
    const shared = new Budget({ maxTokens: 100 });
    const other = new Budget(undefined, shared);
    const own = new Budget(100, shared);
    const holding = await other.reserve(costing(80), new AbortController().signal);
    const controller = new AbortController();
    // Takes 60 of its own 100, then waits for the shared budget (80 + 60 > 100)...
    const aborted = own.reserve(costing(60), controller.signal).catch((reason) => reason);
    await settle();
    controller.abort(new Error('stop'));
    expect(((await aborted) as Error).message).toBe('stop');
    holding();
    // ...and gave its 60 back: 45 + 45 fit in its own 100 again.
    const signal = new AbortController().signal;
    const b = await own.reserve(costing(45), signal);
    let started = false;
    const c = own.reserve(costing(45), signal).then((release) => {
      started = true;
      return release;
    });
    await settle();
    expect(started).toBe(true);
    b();
    (await c)();
  });
});
