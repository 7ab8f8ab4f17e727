/**
 * Runs one turn's tool calls. Parallel: all start at once (each still subject to the run-wide
 * limiter inside `task`), collected like an ordered `Promise.allSettled` — results in input
 * order whatever order they finish in, and one failure never cancels a sibling. Sequential: each
 * starts after the previous one settled.
 */
export async function fanOut<I, O>(
  inputs: readonly I[],
  task: (input: I, index: number) => Promise<O>,
  options: { parallel: boolean },
): Promise<PromiseSettledResult<O>[]> {
  // A synchronous throw inside `task` must become a rejection, not escape the fan-out.
  const settle = (input: I, index: number): Promise<O> =>
    new Promise<O>((resolve) => resolve(task(input, index)));

  if (options.parallel && inputs.length > 1) {
    return Promise.allSettled(inputs.map(settle));
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
