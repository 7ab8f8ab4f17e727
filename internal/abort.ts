/** Longest delay a Node timer takes; longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface TimedSignal {
  /** Aborts when `parent` does or when the time is up, whichever comes first. */
  signal: AbortSignal;
  /** True once the time ran out (as opposed to `parent` aborting). */
  timedOut(): boolean;
  /** Stops the timer; call when the work is done. */
  dispose(): void;
}

/**
 * `parent` or `ms`, whichever ends first. Not `AbortSignal.any([parent, AbortSignal.timeout(ms)])`:
 * Node 20's `any` holds its sources weakly, so the timeout signal can be garbage-collected before
 * it fires (a url_fetch from a server dripping bytes then ran for minutes; Node 22 and 24 keep it),
 * and on every version making one costs more than a controller and a timer (~25 µs on Node 20,
 * once per model call).
 */
export function withTimeout(parent: AbortSignal, ms: number): TimedSignal {
  const { controller, timedOut, dispose } = followParent(parent, {
    ms,
    reason: () => new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
  });
  return { signal: controller.signal, timedOut, dispose };
}

/**
 * A controller that aborts with `parent`'s reason when it does, and, given a `timeout`, with its
 * `reason()` once its `ms` have passed. The timer holds the controller until it fires or `dispose`
 * clears it; `dispose` also stops following `parent`, so nothing is left on a long-lived signal.
 */
export function followParent(
  parent: AbortSignal,
  timeout?: { ms: number; reason: () => unknown },
): { controller: AbortController; timedOut(): boolean; dispose(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const follow = (): void => controller.abort(parent.reason);
  if (timeout !== undefined) timerDeadlines.set(controller.signal, Date.now() + Math.max(timeout.ms, 0));
  const timer =
    timeout === undefined
      ? undefined
      : setTimeout(
          () => {
            if (controller.signal.aborted) return;
            timedOut = true;
            controller.abort(timeout.reason());
          },
          Math.min(Math.max(timeout.ms, 0), MAX_TIMER_MS),
        );
  let unfollow = (): void => {};
  if (parent.aborted) follow();
  else unfollow = onAbort(parent, follow);
  return {
    controller,
    timedOut: () => timedOut,
    dispose: () => {
      clearTimeout(timer);
      timerDeadlines.delete(controller.signal);
      unfollow();
    },
  };
}

/** When the timer of a signal made by `followParent` (or `withTimeout`) fires, until it is disposed. */
const timerDeadlines = new WeakMap<AbortSignal, number>();

/**
 * Whether `signal` aborts by `deadline` (epoch ms) on its own: its timer, still set, fires by
 * then. A call given both needs no timer of its own.
 */
export function abortsBy(signal: AbortSignal, deadline: number): boolean {
  const own = timerDeadlines.get(signal);
  return own !== undefined && own <= deadline;
}

/** What `onAbort` keeps for a signal: the listeners waiting, and the one 'abort' listener that runs them. */
interface Waiting {
  listeners: Set<() => void>;
  dispatch: () => void;
}

const waitingOn = new WeakMap<AbortSignal, Waiting>();

/**
 * Runs `listener` when `signal` aborts (not if it already has); returns what removes it. For a
 * signal many listen to — an agent's, which its children, their model calls and its queued calls
 * follow: the signal gets one 'abort' listener while any are waiting, the rest wait in a set.
 * EventTarget walks its whole list on every add (it refuses duplicates), so a 512-way fan-out
 * following one signal cost O(n²) there.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  let waiting = waitingOn.get(signal);
  if (waiting === undefined) {
    const listeners = new Set<() => void>();
    const dispatch = (): void => {
      waitingOn.delete(signal);
      for (const each of listeners) {
        try {
          each();
        } catch (error) {
          // As EventTarget does: the others still run, and the error is not lost.
          process.nextTick(() => {
            throw error;
          });
        }
      }
    };
    waiting = { listeners, dispatch };
    waitingOn.set(signal, waiting);
    signal.addEventListener('abort', dispatch, { once: true });
  }
  const own = waiting;
  own.listeners.add(listener);
  return () => {
    if (!own.listeners.delete(listener) || own.listeners.size > 0 || waitingOn.get(signal) !== own) return;
    waitingOn.delete(signal);
    signal.removeEventListener('abort', own.dispatch);
  };
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      unfollow();
      resolve();
    }, ms);
    // The agent's signal, which every child of a fan-out retrying at once may wait on: see onAbort.
    const unfollow = onAbort(signal, () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}

/** `work`'s outcome, or `signal`'s reason as soon as it aborts (`work` then runs on, ignored). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      work.catch(() => {});
      reject(signal.reason);
      return;
    }
    const unfollow = onAbort(signal, () => reject(signal.reason));
    work.then(
      (value) => {
        unfollow();
        resolve(value);
      },
      (error: unknown) => {
        unfollow();
        reject(error);
      },
    );
  });
}
