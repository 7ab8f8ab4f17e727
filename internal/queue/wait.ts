import { sleep } from '../abort.js';
import { type ResultLine, tally } from '../batch/result-line.js';
import { ConfigError } from '../errors.js';
import { type QueueDb, retrying } from './db.js';
import { readBatch, resultsFrom } from './store.js';

/** How often `--wait` looks for new results. */
const POLL_MS = 250;

/** How a batch on the queue ended, as `--wait` saw it. */
interface WaitedBatch {
  counts: { completed: number; failed: number; skipped: number };
  /** `stopped` (a cap: `stoppedBy` names it), `cancelled`, or `done`. */
  state: string;
  stoppedBy?: string;
}

/**
 * `--wait`: hands `write` every result of the batch in input order, as soon as every earlier one is
 * there, until each item has one. Every query goes through `retrying`: a restarted PostgreSQL only
 * delays the lines. Ctrl-C (`signal`) stops the waiting only, with the signal's reason; the batch
 * goes on on the workers.
 */
export async function waitForBatch(
  db: QueueDb,
  id: string,
  signal: AbortSignal,
  write: (result: ResultLine) => void,
  /** Once per outage: PostgreSQL cannot be reached (the waiting goes on). */
  onAway?: (error: Error) => void,
): Promise<WaitedBatch> {
  const counts = { completed: 0, failed: 0, skipped: 0 };
  let next = 0;
  // A call returns only once it succeeds: its first failed attempt starts an outage.
  const query = <T>(work: () => Promise<T>): Promise<T> =>
    retrying(signal, work, (error, attempt) => {
      if (attempt === 1) onAway?.(error);
    });
  for (;;) {
    const rows = await query(() => resultsFrom(db.query, id, next));
    for (const row of rows) {
      // Results arrive in any order; a line goes out only once every earlier one has.
      if (row.idx !== next) break;
      const result = JSON.parse(row.line) as ResultLine;
      write(result);
      tally(counts, result.status);
      next++;
    }
    if (rows.length > 0 && rows.at(-1)?.idx === next - 1) continue;
    const batch = await query(() => readBatch(db.query, id));
    if (batch === undefined)
      throw new ConfigError(`batch ${id}: removed from the queue while waiting for it`);
    if (next >= batch.items) {
      return {
        counts,
        state: batch.state,
        ...(batch.stopped_by !== null && batch.stopped_by !== 'cancel'
          ? { stoppedBy: batch.stopped_by }
          : {}),
      };
    }
    await sleep(POLL_MS, signal);
  }
}
