import type { BatchItem } from '../batch/items.js';
import type { Query, Tx } from './db.js';

/** An item this worker now runs, or why it does not. */
export type Claim =
  | { claimed: true; item: BatchItem; attempts: number }
  | { claimed: false; state: 'done' | 'running' | 'gone' };

/**
 * Takes a delivered item: `queued` → `running` under this worker. An item already `done` was
 * delivered again after its result was stored (its job is to be completed at once); one `running`
 * under another worker is left to it (a sweep hands it back if that worker dies).
 */
export async function claimItem(
  query: Query,
  batchId: string,
  idx: number,
  workerId: string,
): Promise<Claim> {
  const [row] = await query<{ item: BatchItem; attempts: number }>(
    `UPDATE axe.items SET state = 'running', worker_id = $3
     WHERE batch_id = $1 AND idx = $2 AND state = 'queued' RETURNING item, attempts`,
    [batchId, idx, workerId],
  );
  if (row) return { claimed: true, item: row.item, attempts: row.attempts };
  const [now] = await query<{ state: string }>(
    'SELECT state FROM axe.items WHERE batch_id = $1 AND idx = $2',
    [batchId, idx],
  );
  if (now?.state === 'done' || now?.state === 'running') return { claimed: false, state: now.state };
  return { claimed: false, state: 'gone' };
}

/**
 * A failed run of an item that `--retries` runs again: the attempt is counted, the item queued
 * again and its job failed in the same transaction, so that pg-boss hands it out again. Only while
 * its batch runs: false for a batch stopped or cancelled since (its failure is then its result).
 */
export async function retryItem(
  tx: Tx,
  batchId: string,
  idx: number,
  job: string,
  workerId: string,
): Promise<boolean> {
  const queued = await tx.query(
    `UPDATE axe.items SET state = 'queued', worker_id = NULL, attempts = attempts + 1
     WHERE batch_id = $1 AND idx = $2 AND state = 'running' AND worker_id = $3
       AND EXISTS (SELECT 1 FROM axe.batches b WHERE b.id = $1 AND b.state = 'running')
     RETURNING idx`,
    [batchId, idx, workerId],
  );
  if (queued.length === 0) return false;
  await tx.jobs.fail(batchId, [job]);
  return true;
}
