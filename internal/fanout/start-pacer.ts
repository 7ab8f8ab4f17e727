/** Children that start in one turn of the event loop before the rest wait for the next turn. */
export const CHILDREN_PER_TURN = 32;

/**
 * Paces the starts of children: up to `perTurn` start in one turn of the event loop; the rest wait
 * in order for the next turns, `perTurn` each. A 512-way fan-out otherwise prepares and writes all
 * its requests in one stretch that holds off every socket callback: the connections opened for
 * them stay half-open until it ends (on loopback, not even the server can accept them), so every
 * request waits for the last one to be made. Paced, the first children's requests are on the wire
 * while the later ones are made, and their connections are ready when they come.
 */
export interface StartPacer {
  /** Undefined when a child may start now, else a promise that settles when it may. */
  turn(): Promise<void> | undefined;
}

export function createStartPacer(perTurn = CHILDREN_PER_TURN): StartPacer {
  let startedThisTurn = 0;
  let nextTurnScheduled = false;
  // A queue of waiting starts, taken from `head` on (no shift: O(1) per start).
  let waiting: (() => void)[] = [];
  let head = 0;

  const nextTurn = (): void => {
    nextTurnScheduled = false;
    startedThisTurn = 0;
    while (startedThisTurn < perTurn && head < waiting.length) {
      startedThisTurn++;
      (waiting[head++] as () => void)();
    }
    if (head === waiting.length) {
      waiting = [];
      head = 0;
    }
    if (startedThisTurn > 0) scheduleNextTurn();
  };
  const scheduleNextTurn = (): void => {
    if (nextTurnScheduled) return;
    nextTurnScheduled = true;
    // After the poll phase: the socket callbacks due run before the next children start.
    setImmediate(nextTurn);
  };

  return {
    turn() {
      scheduleNextTurn();
      if (startedThisTurn < perTurn && head === waiting.length) {
        startedThisTurn++;
        return undefined;
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}

/**
 * The process's pacers, one for children and one for a turn's tool calls: the event loop they
 * share out is the process's.
 */
export const childStarts = createStartPacer();
export const callStarts = createStartPacer();
