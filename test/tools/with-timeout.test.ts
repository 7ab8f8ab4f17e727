import { getEventListeners, setMaxListeners } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { withTimeout } from '../../internal/abort.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

describe('withTimeout', () => {
  it('fires on time even while the garbage collector runs (Node 20 loses AbortSignal.timeout inside any)', async () => {
    const started = Date.now();
    const timed = withTimeout(new AbortController().signal, 300);
    const collecting = setInterval(gc, 20);
    try {
      await new Promise((resolve) => timed.signal.addEventListener('abort', resolve, { once: true }));
    } finally {
      clearInterval(collecting);
      timed.dispose();
    }
    expect(timed.timedOut()).toBe(true);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('follows its parent, and says the time did not run out', () => {
    const parent = new AbortController();
    const timed = withTimeout(parent.signal, 60_000);
    parent.abort(new Error('stop'));
    expect(timed.signal.aborted).toBe(true);
    expect(timed.timedOut()).toBe(false);
    timed.dispose();
  });

  it('leaves nothing on its parent once disposed (a run makes one per model call)', () => {
    const parent = new AbortController();
    // As an agent's signal is: many calls listen to it at once.
    setMaxListeners(0, parent.signal);
    const calls = Array.from({ length: 50 }, () => withTimeout(parent.signal, 60_000));
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(50);
    for (const timed of calls) timed.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    expect(calls.every((timed) => !timed.signal.aborted && !timed.timedOut())).toBe(true);
  });
});
