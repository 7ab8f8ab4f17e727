import type { Query, Tx } from './db.js';
import { handBack } from './store.js';

/** This worker as `axe.workers` keeps it. */
export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  protocol: number;
  leaseSeconds: number;
}

/** Registers the worker (again, when a sweep took it for dead and deleted its row). */
export async function register(query: Query, worker: WorkerRow): Promise<void> {
  await query(
    `INSERT INTO axe.workers (id, host, pid, protocol, lease_seconds) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
    [worker.id, worker.host, worker.pid, worker.protocol, worker.leaseSeconds],
  );
}

/**
 * The worker is alive: its heartbeat is now. A row that is gone (another worker's sweep found its
 * heartbeat too old and handed its items back) is made again: the items still running here end as
 * they do, and the first result of each item wins.
 */
export async function heartbeat(query: Query, worker: WorkerRow): Promise<void> {
  const beat = await query('UPDATE axe.workers SET heartbeat_at = now() WHERE id = $1 RETURNING id', [
    worker.id,
  ]);
  if (beat.length === 0) await register(query, worker);
}

/**
 * Run in one transaction by every worker now and then: the workers whose heartbeat is older than
 * their lease are deleted, the budget they held is given back to their batches, and the items they
 * were running (and any `running` item whose worker row is gone) are handed back to the queue.
 * Returns how many items went back.
 */
export async function sweepDead(tx: Tx): Promise<number> {
  await tx.query('DELETE FROM axe.workers WHERE heartbeat_at < now() - make_interval(secs => lease_seconds)');
  await freeHolds(tx.query, 'NOT EXISTS (SELECT 1 FROM axe.workers w WHERE w.id = holds.worker_id)', []);
  const orphans = await tx.query<{ batch_id: string; idx: number }>(
    `SELECT batch_id, idx FROM axe.items i
     WHERE state = 'running' AND NOT EXISTS (SELECT 1 FROM axe.workers w WHERE w.id = i.worker_id)
     FOR UPDATE SKIP LOCKED`,
  );
  const byBatch = new Map<string, number[]>();
  for (const { batch_id, idx } of orphans) byBatch.set(batch_id, [...(byBatch.get(batch_id) ?? []), idx]);
  for (const [batchId, idxs] of byBatch) await handBack(tx, batchId, idxs);
  return orphans.length;
}

/** The worker leaves: any hold it still has (none after a clean stop) is given back, and its row goes. */
export async function unregister(query: Query, workerId: string): Promise<void> {
  await freeHolds(query, 'worker_id = $1', [workerId]);
  await query('DELETE FROM axe.workers WHERE id = $1', [workerId]);
}

/** Deletes the holds `where` picks and takes them off their batches' reservations, in one statement. */
async function freeHolds(query: Query, where: string, values: unknown[]): Promise<void> {
  await query(
    `WITH h AS (DELETE FROM axe.holds WHERE ${where} RETURNING batch_id, tokens, usd),
     s AS (SELECT batch_id, sum(tokens) AS tokens, sum(usd) AS usd, count(*) AS n FROM h GROUP BY batch_id)
     UPDATE axe.batches b SET reserved_tokens = b.reserved_tokens - s.tokens,
       reserved_usd = b.reserved_usd - s.usd, in_flight = b.in_flight - s.n
     FROM s WHERE b.id = s.batch_id`,
    values,
  );
}
