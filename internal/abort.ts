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
 * it fires (a url_fetch from a server dripping bytes then ran for minutes). Here the timer holds
 * its controller until it fires or `dispose` clears it.
 */
export function withTimeout(parent: AbortSignal, ms: number): TimedSignal {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    Math.min(Math.max(ms, 0), MAX_TIMER_MS),
  );
  return {
    signal: AbortSignal.any([parent, controller.signal]),
    timedOut: () => controller.signal.aborted,
    dispose: () => clearTimeout(timer),
  };
}
