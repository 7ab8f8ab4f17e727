import { sleep } from '../abort.js';
import type { ResultLine } from '../batch/result-line.js';
import { ConfigError } from '../errors.js';
import { type QueueDb, retrying } from './db.js';
import { readBatch, resultsFrom } from './store.js';

/** How often `--wait` looks for new results. */
const POLL_MS = 250;

/** How a batch on the queue ended, as `--wait` saw it. */
export interface WaitedBatch {
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
  let away = false;
  const query = async <T>(work: () => Promise<T>): Promise<T> => {
    const value = await retrying(signal, work, (error) => {
      if (!away) onAway?.(error);
      away = true;
    });
    away = false;
    return value;
  };
  for (;;) {
    const rows = await query(() => resultsFrom(db.query, id, next));
    for (const row of rows) {
      // Results arrive in any order; a line goes out only once every earlier one has.
      if (row.idx !== next) break;
      const result = JSON.parse(row.line) as ResultLine;
      write(result);
      tally(counts, result);
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

/** Counted as a local batch counts: skipped and cancelled apart, any other end a failure. */
function tally(counts: WaitedBatch['counts'], result: ResultLine): void {
  if (result.status === 'completed') counts.completed++;
  else if (result.status === 'skipped' || result.status === 'cancelled') counts.skipped++;
  else counts.failed++;
}
