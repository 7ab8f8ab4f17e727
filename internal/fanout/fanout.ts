import { callStarts } from './start-pacer.js';

/**
 * Runs one turn's tool calls. Parallel: every call starts at once (each still subject to the
 * run-wide limiter inside `task`) except a `barrier` one — a call that changes files or runs
 * commands —, which starts only once every earlier call has settled, and holds back every later
 * call until it has settled itself. A wide turn's calls start through a pacer, as children do
 * (see start-pacer): the first calls' requests are out while the later calls are made. Results
 * are collected like an ordered `Promise.allSettled` — in input order whatever order they finish
 * in, and one failure never cancels a sibling.
 * Sequential: each starts after the previous one settled.
 */
export async function fanOut<I, O>(
  inputs: readonly I[],
  task: (input: I, index: number) => Promise<O>,
  options: { parallel: boolean; barrier?: (input: I) => boolean },
): Promise<PromiseSettledResult<O>[]> {
  // A synchronous throw inside `task` must become a rejection, not escape the fan-out.
  const settle = (input: I, index: number): Promise<O> =>
    new Promise<O>((resolve) => resolve(task(input, index)));

  if (options.parallel && inputs.length > 1) {
    const started: Promise<O>[] = [];
    // Settles when the latest barrier call has; undefined before the first one.
    let gate: Promise<unknown> | undefined;
    for (const [index, input] of inputs.entries()) {
      const turn = callStarts.turn();
      if (turn) await turn;
      let run: Promise<O>;
      if (options.barrier?.(input)) {
        run = Promise.allSettled(started).then(() => settle(input, index));
        gate = run.catch(() => undefined);
      } else {
        run = gate ? gate.then(() => settle(input, index)) : settle(input, index);
      }
      // Collected only once the last call has started, turns of the loop later: a call that fails
      // meanwhile must not be an unhandled rejection.
      run.catch(ignore);
      started.push(run);
    }
    return Promise.allSettled(started);
  }
  const results: PromiseSettledResult<O>[] = [];
  for (const [index, input] of inputs.entries()) {
    try {
      results.push({ status: 'fulfilled', value: await settle(input, index) });
    } catch (reason) {
      results.push({ status: 'rejected', reason });
    }
  }
  return results;
}

function ignore(): void {}
