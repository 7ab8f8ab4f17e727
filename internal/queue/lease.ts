import type { Sql } from './sql.js';

/** This worker as `axe.workers` keeps it. */
export interface WorkerRow {
  id: string;
  host: string;
  pid: number;
  protocol: number;
  leaseSeconds: number;
}

/** The job of a `running` item handed back to the queue, for `boss.fail`. */
export interface HandedBack {
  batchId: string;
  idx: number;
  generation: number;
}

/** Registers the worker (again, when a sweep took it for dead and deleted its row). */
export async function register(sql: Sql, worker: WorkerRow): Promise<void> {
  await sql.query(
    `INSERT INTO axe.workers (id, host, pid, protocol, lease_seconds) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`,
    [worker.id, worker.host, worker.pid, worker.protocol, worker.leaseSeconds],
  );
}

/**
 * The worker is alive: its heartbeat is now. A row that is gone (another worker's sweep found the
 * heartbeat too old, and handed its items back) is made again: the items still running here end
 * as they do, and the first result of each item wins.
 */
export async function heartbeat(sql: Sql, worker: WorkerRow): Promise<void> {
  const { rowCount } = await sql.query('UPDATE axe.workers SET heartbeat_at = now() WHERE id = $1', [
    worker.id,
  ]);
  if (rowCount === 0) await register(sql, worker);
}

/**
 * Run inside a transaction by every worker now and then: the workers whose heartbeat is older than
 * their lease are deleted, their budget holds freed (the batches' reservations given back), and
 * the items they were running (and any `running` item whose worker row is gone) queued again.
 * Returns those items: their jobs are to be failed (pg-boss then hands them out again) in the
 * same transaction.
 */
export async function sweepDead(sql: Sql): Promise<HandedBack[]> {
  await sql.query(
    `DELETE FROM axe.workers WHERE heartbeat_at < now() - make_interval(secs => lease_seconds)`,
  );
  await sql.query(
    `WITH h AS (
       DELETE FROM axe.holds WHERE NOT EXISTS (SELECT 1 FROM axe.workers w WHERE w.id = holds.worker_id)
       RETURNING batch_id, tokens, usd),
     s AS (SELECT batch_id, sum(tokens) AS tokens, sum(usd) AS usd, count(*) AS n FROM h GROUP BY batch_id)
     UPDATE axe.batches b SET reserved_tokens = b.reserved_tokens - s.tokens,
       reserved_usd = b.reserved_usd - s.usd, in_flight = b.in_flight - s.n
     FROM s WHERE b.id = s.batch_id`,
  );
  const { rows } = await sql.query<{ batch_id: string; idx: number; generation: number }>(
    `UPDATE axe.items i SET state = 'queued', worker_id = NULL
     WHERE state = 'running' AND NOT EXISTS (SELECT 1 FROM axe.workers w WHERE w.id = i.worker_id)
     RETURNING batch_id, idx, generation`,
  );
  return rows.map((row) => ({ batchId: row.batch_id, idx: row.idx, generation: row.generation }));
}

/** The worker leaves: its row and any hold it still has (none after a clean stop) go. */
export async function unregister(sql: Sql, workerId: string): Promise<void> {
  await sql.query(
    `WITH h AS (DELETE FROM axe.holds WHERE worker_id = $1 RETURNING batch_id, tokens, usd),
     s AS (SELECT batch_id, sum(tokens) AS tokens, sum(usd) AS usd, count(*) AS n FROM h GROUP BY batch_id)
     UPDATE axe.batches b SET reserved_tokens = b.reserved_tokens - s.tokens,
       reserved_usd = b.reserved_usd - s.usd, in_flight = b.in_flight - s.n
     FROM s WHERE b.id = s.batch_id`,
    [workerId],
  );
  await sql.query('DELETE FROM axe.workers WHERE id = $1', [workerId]);
}
