import type { Budget } from '../budget/budget.js';
import { CancelledError, errorMessage } from '../errors.js';
import { runsToKeep } from '../record/run-record.js';
import { pruneRuns } from '../record/store.js';
import { type MapFormat, readItems } from './input.js';
import { type ItemRunner, runItem } from './item-run.js';
import { type BatchItem, toItem } from './items.js';
import type { Journal } from './journal.js';
import { OrderedOutput } from './ordered-output.js';
import { type BatchCounts, emptyCounts } from './progress.js';
import { type ResultLine, tally, unranLine } from './result-line.js';

/** Why a batch stopped starting items before its input ran out: a cap (its flag), or Ctrl-C. */
export type BatchStop = '--max-failures' | '--max-cost' | '--max-tokens' | 'interrupted';

export interface BatchRun extends Omit<ItemRunner, 'batchId' | 'budget'> {
  id: string;
  /** `--max-tokens` / `--max-cost` of the whole batch: every item's tree reserves in it too. */
  budget?: Budget;
  input: { file: string; format: MapFormat; items: number };
  keyField?: string;
  prompt?: string;
  defaultMessage: string;
  concurrency: number;
  /** `--max-failures` (`--fail-fast`: 1): that many failed items stop the batch. */
  maxFailures?: number;
  journal: Journal;
  /** Journaled results (a resume): these items are not run again, their lines are given as they were. */
  journaled: ReadonlyMap<number, ResultLine>;
  /** `--retry-failed`: journaled items that did not complete run again. */
  retryFailed: boolean;
  /** Each result line, in input order, as soon as every earlier one is out. */
  write: (result: ResultLine) => void;
  /** After every change of the counts (an item started or ended). */
  onCounts?: (counts: BatchCounts) => void;
}

export interface BatchControl {
  /** Start no new item (Ctrl-C once); running ones finish. */
  stop(): void;
  /** Cancel the running items now (Ctrl-C twice, or the grace after the first is over). */
  cancel(): void;
  done: Promise<BatchSummary>;
}

export interface BatchSummary {
  counts: BatchCounts;
  stoppedBy?: BatchStop;
}

/**
 * Runs a batch: its input read as it goes, each item a normal top-level run (its own record,
 * linked to the batch), `concurrency` at a time; each result journaled (on disk) before its line
 * is released, and lines released in input order. Nothing is kept of an item once its line is out.
 */
export function startBatch(run: BatchRun): BatchControl {
  const controller = new AbortController();
  let stopping: BatchStop | undefined;
  const counts = emptyCounts(run.input.items, Date.now());
  const changed = () => run.onCounts?.(counts);
  const ordered = new OrderedOutput<ResultLine>(run.write);

  /** A spent budget starts nothing new: the running items finish (their calls are refused by it). */
  const capReached = () => {
    const { budget } = run;
    if (!budget?.exhausted) return;
    const overCost = budget.usdLimit !== undefined && budget.usedUsd >= budget.usdLimit;
    stopping ??= overCost ? '--max-cost' : '--max-tokens';
  };
  /**
   * An item's result: counted at once (a cap it reaches stops the next start), then journaled
   * (when `journal`) and only then released to the output, in input order.
   */
  const finish = (index: number, line: ResultLine, journal: boolean): Promise<void> => {
    counts.done++;
    tally(counts, line.status);
    counts.tokens += line.usage.input_tokens + line.usage.output_tokens;
    if (line.cost_usd !== null) counts.cost = (counts.cost ?? 0) + line.cost_usd;
    if (run.maxFailures !== undefined && counts.failed >= run.maxFailures) stopping ??= '--max-failures';
    capReached();
    changed();
    if (!journal) {
      ordered.put(index, line);
      return Promise.resolve();
    }
    return run.journal.append(line).then(() => ordered.put(index, line));
  };

  const runner: ItemRunner = { ...run, batchId: run.id };
  const runOne = async (index: number, item: BatchItem): Promise<void> => {
    counts.running++;
    changed();
    const { line, interrupted } = await runItem(runner, item, controller.signal);
    counts.running--;
    // An item Ctrl-C cancelled did not finish: it is not journaled, and a resume runs it again.
    // Its place goes to the next item now; its line waits for the journal's fsync, not the slot.
    keep(finish(index, line, !interrupted), writes);
  };

  /** The items running, and the results on their way to the journal. */
  const running = new Set<Promise<void>>();
  const writes = new Set<Promise<void>>();
  let failure: unknown;
  /** Holds `promise` in `set` until it settles; a failure (the journal cannot be written) stops the batch. */
  const keep = (promise: Promise<void>, set: Set<Promise<void>>) => {
    const kept = promise.catch((error: unknown) => {
      failure ??= error;
      stopping ??= 'interrupted';
    });
    set.add(kept);
    void kept.finally(() => set.delete(kept));
  };
  const track = (promise: Promise<void>) => keep(promise, running);

  const done = traceEnd(
    run,
    counts,
    () => stopping,
    () => failure,
    async (): Promise<BatchSummary> => {
      let index = 0;
      for await (const raw of readItems(run.input.file, run.input.format)) {
        const item = toItem(raw, {
          spec: run.spec,
          defaultMessage: run.defaultMessage,
          ...(run.keyField !== undefined ? { keyField: run.keyField } : {}),
          ...(run.prompt !== undefined ? { prompt: run.prompt } : {}),
        });
        const at = index++;
        const earlier = run.journaled.get(item.line);
        if (earlier && !(run.retryFailed && earlier.status !== 'completed')) {
          await finish(at, earlier, false);
          continue;
        }
        if (item.error !== undefined) {
          run.trace?.unran({ ...item, status: 'error', error: item.error }, Date.now());
          keep(finish(at, unranLine(item, 'error', item.error), true), writes);
          continue;
        }
        while (running.size >= run.concurrency && stopping === undefined) await Promise.race(running);
        capReached();
        if (stopping !== undefined) {
          run.trace?.unran({ ...item, status: 'skipped', error: null }, Date.now());
          await finish(at, unranLine(item, 'skipped', null), false);
          continue;
        }
        track(runOne(at, item));
      }
      await Promise.all(running);
      await Promise.all(writes);
      if (failure !== undefined) throw failure;
      // The records of the items count against `[runs] keep` as any run's: the oldest go once, at the end.
      if (run.records)
        await pruneRuns(run.records.runsDir, await runsToKeep(run.records.globalConfig)).catch(() => 0);
      return { counts, ...(stopping ? { stoppedBy: stopping } : {}) };
    },
  );

  return {
    stop: () => {
      stopping ??= 'interrupted';
    },
    cancel: () => {
      stopping ??= 'interrupted';
      controller.abort(new CancelledError('interrupted', 'SIGINT'));
    },
    done,
  };
}

/** Runs the batch, then ends its trace's root span with the counts, whatever the batch's end. */
async function traceEnd(
  run: BatchRun,
  counts: BatchCounts,
  stoppedBy: () => BatchStop | undefined,
  failure: () => unknown,
  body: () => Promise<BatchSummary>,
): Promise<BatchSummary> {
  let thrown: unknown;
  try {
    return await body();
  } catch (error) {
    thrown = error;
    throw error;
  } finally {
    const stop = stoppedBy();
    const error = failure() ?? thrown;
    run.trace?.end(
      {
        total: counts.total,
        completed: counts.completed,
        failed: counts.failed,
        skipped: counts.skipped,
        ...(stop ? { stoppedBy: stop } : {}),
        ...(error !== undefined ? { error: errorMessage(error) } : {}),
      },
      Date.now(),
    );
  }
}
