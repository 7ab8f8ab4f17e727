import { afterAll, describe, expect, it } from 'vitest';
import { BudgetError } from '../../internal/errors.js';
import { openQueue, type QueueDb, retrying } from '../../internal/queue/db.js';
import { register, sweepDead } from '../../internal/queue/lease.js';
import { QueueBudget } from '../../internal/queue/queue-budget.js';
import { parseQueueUrl } from '../../internal/queue/url.js';
import { testDatabase } from '../pg/index.js';
import { skipBecause } from '../skip.js';

/**
 * The budget of a queued batch, kept in PostgreSQL and shared by every worker: the same rule as a
 * local Budget (a call fits beside those in flight, or starts alone while the batch is under its
 * cap), a spent batch's call refused with the local BudgetError, and the holds of a dead worker
 * given back by the sweep. Real PostgreSQL (test/pg/).
 */
const opened: QueueDb[] = [];
afterAll(async () => {
  for (const db of opened.splice(0)) await db.close();
});

const PRICE = { input: 1000, output: 1000 };
const never = new AbortController().signal;

async function queueWithBatch(
  context: Parameters<typeof skipBecause>[0],
  name: string,
): Promise<{
  db: QueueDb;
  stops: string[];
  budget: (worker: string, onStatement?: () => void) => QueueBudget;
}> {
  const database = await testDatabase(name);
  if (typeof database === 'string') return skipBecause(context, database);
  const db = await openQueue(parseQueueUrl(database.url, '--queue'));
  opened.push(db);
  await db.query(
    `INSERT INTO axe.batches (id, protocol, agent, tree, request, items, max_cost_usd)
     VALUES ('b', 1, 'labeler', '{}', '{}', 10, 0.1)`,
  );
  const stops: string[] = [];
  const budget = (worker: string, onStatement = () => {}) =>
    new QueueBudget(
      'b',
      worker,
      { maxCostUsd: 0.1 },
      {
        run: (signal, statement) => {
          onStatement();
          return retrying(signal, () => statement(db.query));
        },
        lifetime: never,
        stop: async (reason) => {
          stops.push(reason);
        },
        warn: (message) => {
          throw new Error(message);
        },
      },
    );
  return { db, stops, budget };
}

async function batch(db: QueueDb) {
  const [row] = await db.query<{ spent_usd: number; reserved_usd: number; in_flight: number }>(
    "SELECT spent_usd, reserved_usd, in_flight FROM axe.batches WHERE id = 'b'",
  );
  return row;
}

describe('the budget of a queued batch', () => {
  it('a call that does not fit beside the one in flight (of another worker) waits for its release; usage is counted at the release', async (context) => {
    const { db, budget } = await queueWithBatch(context, 'budget_wait');
    const one = budget('w1');
    // The second worker's statements: a try that does not fit is followed by a look at the spent
    // batch, then another try; the third statement means it has waited once.
    let statements = 0;
    let waited: () => void = () => {};
    const hasWaited = new Promise<'waited'>((resolve) => {
      waited = () => resolve('waited');
    });
    const two = budget('w2', () => {
      if (++statements === 3) waited();
    });
    const first = await one.reserveEstimate({ tokens: 80, usd: 0.08 }, never);
    expect(await batch(db)).toEqual({ spent_usd: 0, reserved_usd: 0.08, in_flight: 1 });
    let released = false;
    // $0.08 held + $0.05 > $0.10: the second call starts only once the first has ended.
    const second = two.reserveEstimate({ tokens: 50, usd: 0.05 }, never).then((release) => {
      expect(released).toBe(true);
      return release;
    });
    expect(await Promise.race([hasWaited, second.then(() => 'started')])).toBe('waited');
    one.add({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }, PRICE);
    released = true;
    first();
    await one.settled();
    const secondRelease = await second;
    const row = await batch(db);
    expect(row?.spent_usd).toBeCloseTo(0.015, 9);
    expect(row?.reserved_usd).toBeCloseTo(0.05, 9);
    expect(row?.in_flight).toBe(1);
    two.add({ inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 }, PRICE);
    secondRelease();
    await two.settled();
    expect((await batch(db))?.spent_usd).toBeCloseTo(0.03, 9);
    expect(await db.query('SELECT id FROM axe.holds')).toEqual([]);
  });

  it('alone, a call starts whatever its estimate while the batch is under its cap; once spent, a call fails with the BudgetError and the batch is stopped', async (context) => {
    const { db, stops, budget } = await queueWithBatch(context, 'budget_spent');
    const worker = budget('w1');
    const big = await worker.reserveEstimate({ tokens: 500, usd: 0.5 }, never);
    worker.add({ inputTokens: 100, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 }, PRICE);
    big();
    await worker.settled();
    const refused = await worker.reserveEstimate({ tokens: 1, usd: 0.001 }, never).catch((error) => error);
    expect(refused).toBeInstanceOf(BudgetError);
    expect((refused as BudgetError).message).toBe('budget exceeded: used $0.1200 of $0.1');
    expect(stops).toEqual(['--max-cost']);
    expect(worker.exhausted).toBe(true);
    expect(await batch(db)).toMatchObject({ reserved_usd: 0, in_flight: 0 });
  });

  it("a dead worker's holds are given back by another worker's sweep", async (context) => {
    const { db, budget } = await queueWithBatch(context, 'budget_sweep');
    const worker = { host: 'h', pid: 1, protocol: 1, leaseSeconds: 1 };
    await register(db.query, { ...worker, id: 'dead' });
    await register(db.query, { ...worker, id: 'alive', leaseSeconds: 3600 });
    await budget('dead').reserveEstimate({ tokens: 30, usd: 0.03 }, never);
    await budget('alive').reserveEstimate({ tokens: 20, usd: 0.02 }, never);
    // The dead worker's last heartbeat, long ago.
    await db.query("UPDATE axe.workers SET heartbeat_at = now() - interval '1 hour' WHERE id = 'dead'");
    await db.tx((tx) => sweepDead(tx));
    expect(await db.query<{ id: string }>('SELECT id FROM axe.workers')).toEqual([{ id: 'alive' }]);
    expect(await db.query('SELECT worker_id, usd FROM axe.holds')).toEqual([
      { worker_id: 'alive', usd: 0.02 },
    ]);
    const row = await batch(db);
    expect(row?.reserved_usd).toBeCloseTo(0.02, 9);
    expect(row?.in_flight).toBe(1);
  });
});
