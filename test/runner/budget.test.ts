import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { BudgetError } from '../../internal/errors.js';
import type { ChatRequest } from '../../internal/provider/types.js';
import { Budget } from '../../internal/runner/budget.js';

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
