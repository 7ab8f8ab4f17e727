import type { BatchReport } from '../batch/report.js';
import type { ResultLine } from '../batch/result-line.js';
import { ConfigError } from '../errors.js';
import type { QueueDb } from './db.js';
import { jobOf, QUEUE_PROTOCOL } from './protocol.js';
import { resultsFrom, settleQueued } from './store.js';

/** `axe batches show --queue`: a local batch's report, and where the batch stands on the queue. */
export interface QueuedBatchReport extends BatchReport {
  state: string;
  stopped_by: string | null;
  /** Late completions of an item that already had its result: discarded. */
  duplicates: number;
  /** Workers that ran its items, and those running one now. */
  workers: { ran: number; running: number };
}

type ListedBatch = {
  id: string;
  agent: string;
  input: string;
  created_at: Date;
  items: number;
  state: string;
  stopped_by: string | null;
  duplicates: number;
};

const BATCH_COLUMNS = `id, agent, request->'input'->>'file' AS input, created_at, items, state, stopped_by, duplicates`;

/** Every batch on the queue, newest first, with its counts. */
export async function listQueuedBatches(db: QueueDb): Promise<QueuedBatchReport[]> {
  const rows = await db.query<ListedBatch>(`SELECT ${BATCH_COLUMNS} FROM axe.batches ORDER BY id DESC`);
  const reports: QueuedBatchReport[] = [];
  for (const row of rows) reports.push(await reportOf(db, row));
  return reports;
}

/** One batch's report (`show`), with its failed items. */
export async function showQueuedBatch(db: QueueDb, id: string): Promise<QueuedBatchReport> {
  const rows = await db.query<ListedBatch>(`SELECT ${BATCH_COLUMNS} FROM axe.batches WHERE id = $1`, [id]);
  const row = rows[0];
  if (row === undefined) throw noBatch(id);
  return reportOf(db, row);
}

/** `show --results`: the stored result lines in input order, handed over a page at a time. */
export async function eachQueuedResult(
  db: QueueDb,
  id: string,
  write: (result: ResultLine) => void,
): Promise<void> {
  const PAGE = 1000;
  let from = 0;
  for (;;) {
    const rows = await resultsFrom(db.query, id, from, PAGE);
    for (const row of rows) write(JSON.parse(row.line) as ResultLine);
    const last = rows.at(-1);
    if (rows.length < PAGE || last === undefined) return;
    from = last.idx + 1;
  }
}

async function reportOf(db: QueueDb, row: ListedBatch): Promise<QueuedBatchReport> {
  const sums = await db.query<{
    status: string;
    n: string;
    input_tokens: string;
    output_tokens: string;
    cost: number | null;
    last: Date | null;
  }>(
    `SELECT status, count(*) AS n,
            coalesce(sum((result::jsonb->'usage'->>'input_tokens')::bigint), 0) AS input_tokens,
            coalesce(sum((result::jsonb->'usage'->>'output_tokens')::bigint), 0) AS output_tokens,
            sum((result::jsonb->>'cost_usd')::double precision) AS cost,
            max(finished_at) AS last
       FROM axe.results WHERE batch_id = $1 GROUP BY status`,
    [row.id],
  );
  const counts: Record<string, number> = {};
  let input = 0;
  let output = 0;
  let cost: number | null = null;
  let last = row.created_at.getTime();
  let done = 0;
  for (const sum of sums) {
    counts[sum.status] = Number(sum.n);
    done += Number(sum.n);
    input += Number(sum.input_tokens);
    output += Number(sum.output_tokens);
    if (sum.cost !== null) cost = (cost ?? 0) + sum.cost;
    if (sum.last !== null) last = Math.max(last, sum.last.getTime());
  }
  if (row.items - done > 0) counts.pending = row.items - done;
  const failed = await db.query<{ key: string; line: number; status: string; error: string | null }>(
    `SELECT key, (result::jsonb->>'line')::int AS line, status, result::jsonb->>'error' AS error
       FROM axe.results WHERE batch_id = $1 AND status <> 'completed' ORDER BY idx`,
    [row.id],
  );
  const workers = await db.query<{ ran: string; running: string }>(
    `SELECT count(DISTINCT worker_id) AS ran,
            count(DISTINCT worker_id) FILTER (WHERE state = 'running') AS running
       FROM axe.items WHERE batch_id = $1`,
    [row.id],
  );
  return {
    id: row.id,
    agent: row.agent,
    input: row.input,
    created_at: row.created_at.toISOString(),
    items: row.items,
    counts,
    usage: { input_tokens: input, output_tokens: output },
    cost_usd: cost,
    elapsed_ms: Math.max(0, Math.round(last - row.created_at.getTime())),
    failed,
    state: row.state,
    stopped_by: row.stopped_by,
    duplicates: row.duplicates,
    workers: { ran: Number(workers[0]?.ran ?? 0), running: Number(workers[0]?.running ?? 0) },
  };
}

/**
 * `cancel`: first the batch's state alone, in a transaction of its own, so that workers see the
 * cancel (and end its running items) at once, however many items are queued; then its queued items
 * end `cancelled`. A cancel that was cut short between the two is finished by the next one.
 */
export async function cancelQueuedBatch(
  db: QueueDb,
  id: string,
): Promise<{ cancelled: boolean; state: string }> {
  const outcome = await db.tx(async (tx) => {
    const rows = await tx.query<{ state: string }>('SELECT state FROM axe.batches WHERE id = $1 FOR UPDATE', [
      id,
    ]);
    const state = rows[0]?.state;
    if (state === undefined) throw noBatch(id);
    if (state === 'done' || state === 'cancelled') return { cancelled: false, state };
    // A batch a cap stopped has no queued item left; its running ones end now.
    await tx.query(`UPDATE axe.batches SET state = 'cancelled', stopped_by = 'cancel' WHERE id = $1`, [id]);
    return { cancelled: true, state: 'cancelled' };
  });
  if (outcome.state === 'cancelled') await db.tx((tx) => settleQueued(tx, id, 'cancelled'));
  return outcome;
}

/**
 * `resume`: a stopped or cancelled batch runs again. Its items without a result, and those a stop
 * or a cancel passed over (skipped, cancelled), go back on the queue under new job ids; with
 * `retryFailed`, its failed ones too. Its caps start anew, as a local resume's do.
 */
export async function resumeQueuedBatch(
  db: QueueDb,
  id: string,
  options: { retryFailed: boolean },
): Promise<{ requeued: number; items: number }> {
  return db.tx(async (tx) => {
    const rows = await tx.query<{ state: string; items: number; protocol: number }>(
      'SELECT state, items, protocol FROM axe.batches WHERE id = $1 FOR UPDATE',
      [id],
    );
    const batch = rows[0];
    if (batch === undefined) throw noBatch(id);
    if (batch.protocol !== QUEUE_PROTOCOL) {
      throw new ConfigError(
        `batch ${id} needs queue protocol ${batch.protocol}; this axe speaks ${QUEUE_PROTOCOL}: resume it with that axe`,
      );
    }
    const rerun = options.retryFailed ? `status <> 'completed'` : `status IN ('skipped', 'cancelled')`;
    await tx.query(`DELETE FROM axe.results WHERE batch_id = $1 AND ${rerun}`, [id]);
    const requeued = await tx.query<{ idx: number; generation: number }>(
      `UPDATE axe.items i SET state = 'queued', worker_id = NULL, attempts = 0, generation = generation + 1
        WHERE i.batch_id = $1 AND i.state = 'done'
          AND NOT EXISTS (SELECT 1 FROM axe.results r WHERE r.batch_id = i.batch_id AND r.idx = i.idx)
        RETURNING idx, generation`,
      [id],
    );
    await tx.query(
      `WITH r AS (SELECT count(*)::int AS done FROM axe.results WHERE batch_id = $1)
       UPDATE axe.batches SET stopped_by = NULL, spent_tokens = 0, spent_usd = 0,
              -- Nothing left to run (every item kept its result): the batch is over, not running.
              state = CASE WHEN r.done >= items THEN 'done' ELSE 'running' END,
              finished_at = CASE WHEN r.done >= items THEN coalesce(finished_at, now()) END,
              done = r.done,
              failed = (SELECT count(*) FROM axe.results WHERE batch_id = $1 AND status NOT IN ('completed', 'skipped', 'cancelled'))
         FROM r WHERE id = $1`,
      [id],
    );
    for (let at = 0; at < requeued.length; at += 1000) {
      const jobs = requeued.slice(at, at + 1000).map(({ idx, generation }) => jobOf(id, idx, generation));
      await tx.jobs.insert(id, jobs);
    }
    return { requeued: requeued.length, items: batch.items };
  });
}

/** `rm`: a batch that is not running, with its items, results and pg-boss queue. */
export async function removeQueuedBatch(db: QueueDb, id: string): Promise<void> {
  const rows = await db.query<{ state: string }>('SELECT state FROM axe.batches WHERE id = $1', [id]);
  const state = rows[0]?.state;
  if (state === undefined) throw noBatch(id);
  if (state === 'running') {
    throw new ConfigError(
      `batch ${id} is running on the workers: cancel it first (axe batches cancel ${id})`,
    );
  }
  await db.tx((tx) => tx.query('DELETE FROM axe.batches WHERE id = $1', [id]));
  await db.jobs.deleteQueue(id);
}

/** A batch id that names no batch on the queue (exit 2). */
function noBatch(id: string): ConfigError {
  return new ConfigError(`no batch ${id} on the queue (see axe batches list)`);
}
