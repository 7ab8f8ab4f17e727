import { getEventListeners, setMaxListeners } from 'node:events';
import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { abortsBy, followParent, onAbort, withTimeout } from '../../internal/abort.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

describe('withTimeout', () => {
  it('fires on time even while the garbage collector runs (Node 20 loses AbortSignal.timeout inside any)', async () => {
    // A timer lost to the collector never fires: the wait below would end only at the test's timeout.
    const timed = withTimeout(new AbortController().signal, 300);
    const collecting = setInterval(gc, 20);
    try {
      await new Promise((resolve) => timed.signal.addEventListener('abort', resolve, { once: true }));
    } finally {
      clearInterval(collecting);
      timed.dispose();
    }
    expect(timed.timedOut()).toBe(true);
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
    // One listener on the parent however many follow it (see onAbort).
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(1);
    for (const timed of calls) timed.dispose();
    expect(getEventListeners(parent.signal, 'abort')).toHaveLength(0);
    expect(calls.every((timed) => !timed.signal.aborted && !timed.timedOut())).toBe(true);
  });
});

describe('abortsBy', () => {
  it("a signal with a timer aborts by any deadline at or after the timer's, until it is disposed", () => {
    const timed = withTimeout(new AbortController().signal, 60_000);
    const fires = Date.now() + 60_000;
    expect(abortsBy(timed.signal, fires + 1000)).toBe(true);
    expect(abortsBy(timed.signal, fires - 1000)).toBe(false);
    timed.dispose();
    expect(abortsBy(timed.signal, fires + 1000)).toBe(false);
  });

  it('a signal without a timer of its own never does, whatever it follows', () => {
    const parent = withTimeout(new AbortController().signal, 1000);
    const follower = followParent(parent.signal);
    expect(abortsBy(new AbortController().signal, Date.now() + 60_000)).toBe(false);
    expect(abortsBy(follower.controller.signal, Date.now() + 60_000)).toBe(false);
    follower.dispose();
    parent.dispose();
  });
});

describe('onAbort', () => {
  it('2000 listeners on one signal: one abort listener on it; an abort runs the rest in order, once', () => {
    const controller = new AbortController();
    const ran: number[] = [];
    const removers = Array.from({ length: 2000 }, (_, i) => onAbort(controller.signal, () => ran.push(i)));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    removers[7]?.();
    controller.abort();
    controller.abort();
    expect(ran).toEqual(Array.from({ length: 2000 }, (_, i) => i).filter((i) => i !== 7));
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('the last one removed takes the abort listener off; a later one puts it back', () => {
    const controller = new AbortController();
    const first = onAbort(controller.signal, () => {});
    const second = onAbort(controller.signal, () => {});
    first();
    first();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    second();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    let ran = false;
    onAbort(controller.signal, () => {
      ran = true;
    });
    controller.abort();
    expect(ran).toBe(true);
  });

  it('a listener removed while the abort runs (a follower disposing another) is skipped', () => {
    const controller = new AbortController();
    const ran: string[] = [];
    let removeB = () => {};
    onAbort(controller.signal, () => {
      ran.push('a');
      removeB();
    });
    removeB = onAbort(controller.signal, () => ran.push('b'));
    onAbort(controller.signal, () => ran.push('c'));
    controller.abort();
    expect(ran).toEqual(['a', 'c']);
  });
});
