import { sleep } from '../abort.js';
import type { BudgetLimits, Estimate, SharedLimit } from '../budget/budget.js';
import { BudgetError } from '../errors.js';
import { costOf, type Price } from '../prices/index.js';
import type { Usage } from '../provider/types.js';
import type { Query } from './db.js';

/** How long a call that does not fit waits before it asks again, first and at most. */
const WAIT_FIRST_MS = 50;
const WAIT_MOST_MS = 1000;

/** Where the budget's statements go and what it does around them. */
export interface QueueBudgetDeps {
  /** Runs a statement, reconnecting as the worker's other calls do (until `signal`). */
  run<T>(signal: AbortSignal, statement: (query: Query) => Promise<T>): Promise<T>;
  /** Ends the retries of a release: the worker is leaving for good. */
  lifetime: AbortSignal;
  /** The batch is spent: stop it (its queued items skipped), as a local batch stops. */
  stop(reason: '--max-cost' | '--max-tokens'): Promise<void>;
  /** A release that could not be written (the database gone for good): said once. */
  warn(message: string): void;
}

/**
 * The budget of a queued batch (`--max-cost`, `--max-tokens`), shared by every worker: the parent
 * of each item's tree on this worker. A call reserves its estimate in the batch's row with one
 * atomic statement, under the same rule as a local Budget (it fits beside the calls in flight, or
 * none is in flight and the batch is under its limit); the hold is a row of `axe.holds`, freed
 * with the call's real usage added in one statement, or by another worker's sweep when this one
 * dies. The overrun is therefore bounded by the calls in flight across all workers.
 */
export class QueueBudget implements SharedLimit {
  readonly needsPrice: boolean;
  private spent = false;
  /** Usage counted by `add` and not yet written: it goes with the next release. */
  private pendingTokens = 0;
  private pendingUsd = 0;
  /** Releases on their way to the database. */
  private readonly releasing = new Set<Promise<void>>();
  private warned = false;

  constructor(
    private readonly batchId: string,
    private readonly workerId: string,
    caps: BudgetLimits,
    private readonly deps: QueueBudgetDeps,
  ) {
    this.needsPrice = caps.maxCostUsd !== undefined;
  }

  /** Known here once a call of this worker found the batch spent. */
  get exhausted(): boolean {
    return this.spent;
  }

  add(usage: Usage, price?: Price): void {
    this.pendingTokens += usage.inputTokens + usage.outputTokens;
    if (price) this.pendingUsd += costOf(usage, price).usd;
  }

  async reserveEstimate(estimate: Estimate, signal: AbortSignal): Promise<() => void> {
    let wait = WAIT_FIRST_MS;
    for (;;) {
      signal.throwIfAborted();
      const hold = await this.deps.run(signal, (query) => this.tryHold(query, estimate));
      if (hold !== undefined) return () => this.release(hold);
      const spent = await this.deps.run(signal, (query) => this.spentError(query));
      if (spent) {
        // Said to the batch once per worker: it stops, its queued items are skipped.
        if (!this.spent) await this.deps.stop(spent.limitFlag);
        this.spent = true;
        throw spent.error;
      }
      await sleep(wait, signal);
      wait = Math.min(wait * 2, WAIT_MOST_MS);
    }
  }

  /** Every release of this worker written (or given up). */
  async settled(): Promise<void> {
    while (this.releasing.size > 0) await Promise.all(this.releasing);
  }

  /** The hold's id when the estimate fits now; undefined when it must wait or the batch is spent. */
  private async tryHold(query: Query, estimate: Estimate): Promise<string | undefined> {
    const rows = await query<{ id: string }>(
      `WITH b AS (
         UPDATE axe.batches SET reserved_tokens = reserved_tokens + $2, reserved_usd = reserved_usd + $3,
           in_flight = in_flight + 1
         WHERE id = $1
           AND (max_tokens IS NULL OR spent_tokens < max_tokens)
           AND (max_cost_usd IS NULL OR spent_usd < max_cost_usd)
           AND (in_flight = 0 OR (
             (max_tokens IS NULL OR spent_tokens + reserved_tokens + $2 <= max_tokens)
             AND (max_cost_usd IS NULL OR spent_usd + reserved_usd + $3 <= max_cost_usd)))
         RETURNING id)
       INSERT INTO axe.holds (batch_id, worker_id, tokens, usd) SELECT id, $4, $2, $3 FROM b RETURNING id`,
      [this.batchId, estimate.tokens, estimate.usd, this.workerId],
    );
    return rows[0]?.id;
  }

  /** The BudgetError of a batch that reached a cap, as a local batch's budget says it. */
  private async spentError(
    query: Query,
  ): Promise<{ error: BudgetError; limitFlag: '--max-cost' | '--max-tokens' } | undefined> {
    const rows = await query<{
      spent_tokens: string;
      spent_usd: number;
      max_tokens: string | null;
      max_cost_usd: number | null;
    }>('SELECT spent_tokens, spent_usd, max_tokens, max_cost_usd FROM axe.batches WHERE id = $1', [
      this.batchId,
    ]);
    const row = rows[0];
    if (!row) return { error: new BudgetError(0, 0), limitFlag: '--max-tokens' };
    const tokens = Number(row.spent_tokens);
    if (row.max_tokens !== null && tokens >= Number(row.max_tokens)) {
      return { error: new BudgetError(tokens, Number(row.max_tokens)), limitFlag: '--max-tokens' };
    }
    if (row.max_cost_usd !== null && row.spent_usd >= row.max_cost_usd) {
      return { error: new BudgetError(row.spent_usd, row.max_cost_usd, 'usd'), limitFlag: '--max-cost' };
    }
    return undefined;
  }

  /**
   * The call ended: its usage (counted by `add` just before) is added and its hold freed, in one
   * statement. A hold a sweep freed already (this worker was taken for dead) only adds the usage.
   */
  private release(hold: string): void {
    const tokens = this.pendingTokens;
    const usd = this.pendingUsd;
    this.pendingTokens = 0;
    this.pendingUsd = 0;
    const written = this.deps
      .run(this.deps.lifetime, (query) =>
        query(
          `WITH h AS (DELETE FROM axe.holds WHERE id = $2 RETURNING tokens, usd)
           UPDATE axe.batches SET spent_tokens = spent_tokens + $3, spent_usd = spent_usd + $4,
             reserved_tokens = reserved_tokens - COALESCE((SELECT tokens FROM h), 0),
             reserved_usd = reserved_usd - COALESCE((SELECT usd FROM h), 0),
             in_flight = in_flight - (SELECT count(*) FROM h)
           WHERE id = $1`,
          [this.batchId, hold, tokens, usd],
        ),
      )
      .then(
        () => {},
        (error: unknown) => {
          if (this.warned) return;
          this.warned = true;
          this.deps.warn(`batch ${this.batchId}: a call's usage could not be counted (${String(error)})`);
        },
      );
    this.releasing.add(written);
    void written.finally(() => this.releasing.delete(written));
  }
}
