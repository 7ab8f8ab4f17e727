import type { BatchItem } from '../batch/items.js';
import type { ResultLine } from '../batch/result-line.js';
import type { Sql } from './sql.js';

/** An item this worker now runs, or why it does not. */
export type Claim =
  | { claimed: true; item: BatchItem; attempts: number }
  | { claimed: false; state: 'done' | 'running' | 'gone' };

/**
 * Takes a delivered item: `queued` → `running` under this worker. An item already `done` was
 * delivered twice (its job is to be completed at once); one `running` elsewhere is left to that
 * worker (the sweep hands it back if that worker dies).
 */
export async function claimItem(sql: Sql, batchId: string, idx: number, workerId: string): Promise<Claim> {
  const { rows } = await sql.query<{ item: BatchItem; attempts: number }>(
    `UPDATE axe.items SET state = 'running', worker_id = $3
     WHERE batch_id = $1 AND idx = $2 AND state = 'queued' RETURNING item, attempts`,
    [batchId, idx, workerId],
  );
  const row = rows[0];
  if (row) return { claimed: true, item: row.item, attempts: row.attempts };
  const now = await sql.query<{ state: string; worker_id: string | null }>(
    'SELECT state, worker_id FROM axe.items WHERE batch_id = $1 AND idx = $2',
    [batchId, idx],
  );
  const state = now.rows[0]?.state;
  // Running under this very worker: a second delivery of an item it runs now.
  if (state === 'done' || state === 'running') return { claimed: false, state };
  return { claimed: false, state: 'gone' };
}

/** What storing a result found. */
export interface Stored {
  /** Another completion of the same item came first: this one is discarded (and counted). */
  duplicate: boolean;
  /** The batch's failed items now, and its `--max-failures`. */
  failed: number;
  maxFailures: number | null;
}

/**
 * An item's result, written in the caller's transaction: the first completion of an item wins
 * (a later one only counts in `duplicates`), the item is `done`, a failure counts for
 * `--max-failures`. A transaction retried after its commit was lost on the way back finds its own
 * result there, and counts nothing twice.
 */
export async function storeResult(
  sql: Sql,
  batchId: string,
  idx: number,
  line: ResultLine,
  workerId: string,
  failure: boolean,
): Promise<Stored> {
  const inserted = await sql.query(
    `INSERT INTO axe.results (batch_id, idx, key, status, result, worker_id) VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (batch_id, idx) DO NOTHING`,
    [batchId, idx, line.key, line.status, JSON.stringify(line), workerId],
  );
  if (inserted.rowCount === 0) {
    const { rows } = await sql.query<{ ours: boolean }>(
      'SELECT worker_id = $3 AND result = $4::jsonb AS ours FROM axe.results WHERE batch_id = $1 AND idx = $2',
      [batchId, idx, workerId, JSON.stringify(line)],
    );
    const ours = rows[0]?.ours === true;
    const counted = await sql.query<{ failed: number; max_failures: number | null }>(
      `UPDATE axe.batches SET duplicates = duplicates + $2 WHERE id = $1 RETURNING failed, max_failures`,
      [batchId, ours ? 0 : 1],
    );
    const batch = counted.rows[0];
    return { duplicate: !ours, failed: batch?.failed ?? 0, maxFailures: batch?.max_failures ?? null };
  }
  await sql.query(`UPDATE axe.items SET state = 'done' WHERE batch_id = $1 AND idx = $2`, [batchId, idx]);
  const { rows } = await sql.query<{ failed: number; max_failures: number | null }>(
    'UPDATE axe.batches SET failed = failed + $2 WHERE id = $1 RETURNING failed, max_failures',
    [batchId, failure ? 1 : 0],
  );
  const batch = rows[0];
  return { duplicate: false, failed: batch?.failed ?? 0, maxFailures: batch?.max_failures ?? null };
}

/**
 * The item goes back to `queued` for another run (its job is to be failed in the same
 * transaction, so that pg-boss hands it out again); `attempt` counts it for `--retries`.
 */
export async function requeueItem(
  sql: Sql,
  batchId: string,
  idx: number,
  workerId: string,
  attempt: boolean,
): Promise<void> {
  await sql.query(
    `UPDATE axe.items SET state = 'queued', worker_id = NULL, attempts = attempts + $4
     WHERE batch_id = $1 AND idx = $2 AND state = 'running' AND worker_id = $3`,
    [batchId, idx, workerId, attempt ? 1 : 0],
  );
}
