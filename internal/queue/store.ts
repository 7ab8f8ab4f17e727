import type { BatchItem } from '../batch/items.js';
import { isFailure, type ResultLine, unranLine } from '../batch/result-line.js';
import { pickBatch } from '../batch/store.js';
import { maskSecrets } from '../secrets.js';
import type { Query, Tx } from './db.js';
import { jobId } from './protocol.js';

/** A batch's row, as the statements below read it. */
export interface BatchRow {
  id: string;
  protocol: number;
  state: 'running' | 'stopped' | 'cancelled' | 'done';
  stopped_by: string | null;
  agent: string;
  items: number;
  done: number;
  failed: number;
  duplicates: number;
  created_at: Date;
  finished_at: Date | null;
}

/** Why a batch stops before its items are done: a cap (its flag), or `axe batches cancel`. */
export type StopReason = '--max-cost' | '--max-tokens' | '--max-failures' | 'cancel';

export async function readBatch(query: Query, id: string): Promise<BatchRow | undefined> {
  const rows = await query<BatchRow & Record<string, unknown>>(
    `SELECT id, protocol, state, stopped_by, agent, items, done, failed, duplicates, created_at, finished_at
       FROM axe.batches WHERE id = $1`,
    [id],
  );
  return rows[0];
}

/** A batch id from what the user typed: an id, a unique prefix of one, or `last`. */
export async function findQueuedBatch(query: Query, ref: string, where: string): Promise<string> {
  const rows = await query<{ id: string }>('SELECT id FROM axe.batches ORDER BY id DESC');
  return pickBatch(
    rows.map((row) => row.id),
    ref,
    where,
  );
}

/** How an attempt to store a result went: stored, already there from this worker (a retried commit), or a late duplicate. */
export type Stored = 'stored' | 'ours' | 'duplicate';

/**
 * Stores an item's result — the first completion wins: a later one for the same item is discarded
 * and counted as a duplicate. Marks the item done, counts it, and ends the batch when it was the
 * last; a failure that reaches `--max-failures` stops the batch. Run it in the transaction that
 * completes the item's job, so that the result and the job's end are one.
 */
export async function insertResult(
  tx: Tx,
  batchId: string,
  idx: number,
  result: ResultLine,
  workerId: string | null,
): Promise<Stored> {
  // Masked as every output of axe: an answer that echoes a key does not keep it in the database.
  const text = resultText(result);
  const inserted = await tx.query(
    `INSERT INTO axe.results (batch_id, idx, key, status, result, worker_id)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (batch_id, idx) DO NOTHING RETURNING idx`,
    [batchId, idx, result.key, result.status, text, workerId],
  );
  if (inserted.length === 0) {
    const [earlier] = await tx.query<{ worker_id: string | null }>(
      'SELECT worker_id FROM axe.results WHERE batch_id = $1 AND idx = $2',
      [batchId, idx],
    );
    if (workerId !== null && earlier?.worker_id === workerId) return 'ours';
    await tx.query('UPDATE axe.batches SET duplicates = duplicates + 1 WHERE id = $1', [batchId]);
    return 'duplicate';
  }
  await tx.query(`UPDATE axe.items SET state = 'done', worker_id = NULL WHERE batch_id = $1 AND idx = $2`, [
    batchId,
    idx,
  ]);
  const failed = isFailure(result.status) ? 1 : 0;
  const [batch] = await tx.query<{ state: string; failed: number; max_failures: number | null }>(
    `UPDATE axe.batches
        SET done = done + 1, failed = failed + $2,
            state = CASE WHEN done + 1 >= items AND state = 'running' THEN 'done' ELSE state END,
            finished_at = CASE WHEN done + 1 >= items THEN now() ELSE finished_at END
      WHERE id = $1 RETURNING state, failed, max_failures`,
    [batchId, failed],
  );
  if (
    batch &&
    batch.state === 'running' &&
    batch.max_failures !== null &&
    batch.failed >= batch.max_failures
  ) {
    await stopBatch(tx, batchId, '--max-failures');
  }
  return 'stored';
}

/**
 * Stops a batch: no item of it starts again anywhere. Its queued items get their result now —
 * `skipped` for a cap, `cancelled` for a cancel, as in a local batch — and their jobs are
 * cancelled. Running items: a cap lets them finish; a cancel is seen by their workers, which end
 * them. Returns false when the batch was not running (already stopped, cancelled or done).
 */
export async function stopBatch(tx: Tx, batchId: string, reason: StopReason): Promise<boolean> {
  const state = reason === 'cancel' ? 'cancelled' : 'stopped';
  const stopped = await tx.query(
    `UPDATE axe.batches SET state = $2, stopped_by = $3 WHERE id = $1 AND state = 'running' RETURNING id`,
    [batchId, state, reason],
  );
  if (stopped.length === 0) return false;
  await settleQueued(tx, batchId, reason === 'cancel' ? 'cancelled' : 'skipped');
  return true;
}

/**
 * Gives items back to the queue — their worker is gone, or it was stopped before they finished:
 * they run again elsewhere (their job returns to pg-boss's retry state, not counted as a failure
 * of the item). Items of a batch that is no longer running get their unran result instead.
 */
export async function handBack(tx: Tx, batchId: string, idxs: readonly number[]): Promise<void> {
  if (idxs.length === 0) return;
  const back = await tx.query<{ idx: number; generation: number }>(
    `UPDATE axe.items SET state = 'queued', worker_id = NULL
      WHERE batch_id = $1 AND idx = ANY($2::int[]) AND state = 'running'
      RETURNING idx, generation`,
    [batchId, idxs],
  );
  const [batch] = await tx.query<{ state: string }>('SELECT state FROM axe.batches WHERE id = $1', [batchId]);
  const jobs = back.map((item) => jobId(batchId, item.idx, item.generation));
  if (batch?.state === 'running') {
    await tx.jobs.fail(batchId, jobs);
    return;
  }
  await settleQueued(tx, batchId, batch?.state === 'cancelled' ? 'cancelled' : 'skipped');
}

/**
 * The queued items of a batch that stopped: each its unran result, done, and its job cancelled.
 * Safe to run again: what it settled is no longer queued.
 */
export async function settleQueued(tx: Tx, batchId: string, status: 'skipped' | 'cancelled'): Promise<void> {
  const queued = await tx.query<{ idx: number; generation: number; item: BatchItem }>(
    `UPDATE axe.items SET state = 'done' WHERE batch_id = $1 AND state = 'queued' RETURNING idx, generation, item`,
    [batchId],
  );
  if (queued.length === 0) return;
  const inserted = await insertUnran(tx, batchId, status, queued);
  await tx.query(
    `UPDATE axe.batches SET done = done + $2,
            finished_at = CASE WHEN done + $2 >= items THEN now() ELSE finished_at END
      WHERE id = $1`,
    [batchId, inserted],
  );
  await tx.jobs.cancel(
    batchId,
    queued.map((q) => jobId(batchId, q.idx, q.generation)),
  );
}

/**
 * The results of items that did not run (`error` for one that could not be read, `skipped` or
 * `cancelled` for one a stop passed over), as a local batch writes their lines; an item that has a
 * result already keeps it. Returns how many were stored.
 */
export async function insertUnran(
  tx: Tx,
  batchId: string,
  status: 'error' | 'skipped' | 'cancelled',
  items: readonly { idx: number; item: BatchItem }[],
): Promise<number> {
  if (items.length === 0) return 0;
  const inserted = await tx.query(
    `INSERT INTO axe.results (batch_id, idx, key, status, result)
     SELECT $1, idx, key, $2, result FROM unnest($3::int[], $4::text[], $5::text[]) AS r (idx, key, result)
     ON CONFLICT (batch_id, idx) DO NOTHING RETURNING idx`,
    [
      batchId,
      status,
      items.map(({ idx }) => idx),
      items.map(({ item }) => item.key),
      items.map(({ item }) => resultText(unranLine(item, status, item.error ?? null))),
    ],
  );
  return inserted.length;
}

/** A result line as stored: masked as every output of axe, the JSON text a local batch prints. */
function resultText(line: ResultLine): string {
  return maskSecrets(JSON.stringify(line));
}

/** The stored result lines of a batch from position `from` on, in input order, as JSON text (`limit` at most). */
export async function resultsFrom(
  query: Query,
  batchId: string,
  from: number,
  limit = 1000,
): Promise<{ idx: number; line: string }[]> {
  return query<{ idx: number; line: string }>(
    'SELECT idx, result AS line FROM axe.results WHERE batch_id = $1 AND idx >= $2 ORDER BY idx LIMIT $3',
    [batchId, from, limit],
  );
}

/** The state of each of `ids` (for workers: a cancel or a cap of a batch whose items they run). */
export async function batchStates(
  query: Query,
  ids: readonly string[],
): Promise<Map<string, BatchRow['state']>> {
  const rows = await query<{ id: string; state: BatchRow['state'] }>(
    'SELECT id, state FROM axe.batches WHERE id = ANY($1::text[])',
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.state]));
}
