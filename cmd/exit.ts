/**
 * Once nothing is left to run, write or wait for, axe exits there and then: Node would otherwise
 * free the heap page by page before the process ends, a wait nobody needs (~5 ms after a one-turn
 * run, ~25 ms after a 512-way fan-out, measured on a 2-core VM). Every 'exit' listener still runs
 * and the exit code is kept. Should anyone else listen for 'beforeExit' (which may start more
 * work), Node's usual exit is left alone.
 */
export function exitOnceIdle(): void {
  process.once('beforeExit', () => {
    if (process.listenerCount('beforeExit') === 0) process.exit();
  });
}

/**
 * Called when a command is over. Once the ticks and promise callbacks queued by then have run, if
 * nothing keeps the event loop alive (no handle, request or ref'd timer) and nobody else listens
 * for 'beforeExit', axe exits at once instead of going round the loop once more for nothing: V8
 * may first run a garbage collection it scheduled there (~0.5–1 ms after listing 50 agents).
 * Otherwise exitOnceIdle exits when the loop is idle.
 */
export function exitIfNothingLeft(): void {
  process.nextTick(() => {
    if (process.listenerCount('beforeExit') > 1) return;
    if (process.getActiveResourcesInfo().length === 0) process.exit();
  });
}
