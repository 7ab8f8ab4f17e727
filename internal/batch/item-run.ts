import type { AgentSpec } from '../agent/spec.js';
import type { SharedLimit } from '../budget/budget.js';
import type { CassettePlayer, CassetteRecorder } from '../cassette/cassette.js';
import type { GlobalConfig } from '../config/global.js';
import type { HttpPool } from '../http/pool.js';
import { type OpenRecord, openRunRecord } from '../record/run-record.js';
import type { EmitEvent, RunEvent } from '../runner/events.js';
import { runTopLevel } from '../runner/top-level.js';
import type { AgentRunResult, RunOutcome, RunRequest } from '../runner/types.js';
import type { BatchTrace } from '../telemetry/batch-trace.js';
import type { BatchItem } from './items.js';
import { type ResultLine, resultLine } from './result-line.js';

/** What every item's run shares: the agent and everything of a normal run but its message and inputs. */
export type ItemRunBase = Omit<
  RunRequest,
  | 'input'
  | 'inputs'
  | 'signal'
  | 'emit'
  | 'startedAt'
  | 'pool'
  | 'record'
  | 'replay'
  | 'shared'
  | 'sharedBudget'
>;

type RecordBase = Omit<Parameters<typeof openRunRecord>[2], 'input' | 'inputs'>;

/**
 * What the items of one batch share, wherever they run: in the process that read the input (a
 * local batch) or on a worker that took them from a queue.
 */
export interface ItemRunner {
  /** The batch's id: each item's run record is linked to it. */
  batchId: string;
  spec: AgentSpec;
  base: ItemRunBase;
  /** `--max-tokens` / `--max-cost` of the whole batch: every item's tree reserves in it too. */
  budget?: SharedLimit;
  /** Each item's cost in dollars, from its tree (undefined when no price is known). */
  costOf: (result: AgentRunResult) => number | undefined;
  /** What the items share: one pool per provider, one cassette for the batch. */
  shared: { pool?: HttpPool; player?: CassettePlayer; recorder?: CassetteRecorder };
  /** Each item's run record (linked to the batch), when runs are recorded. */
  records?: {
    globalConfig: () => Promise<GlobalConfig>;
    env: NodeJS.ProcessEnv;
    request: RecordBase;
    runsDir: string;
  };
  /** Every event of every item's run, and `item.start` / `item.end`. */
  emit: EmitEvent;
  /** When the batch is traced: its spans, a span per item run. */
  trace?: BatchTrace;
}

/** How one item's run ended. */
interface ItemEnd {
  line: ResultLine;
  /** Stopped by `signal` (Ctrl-C, a cancelled batch) rather than by its own run's end. */
  interrupted: boolean;
}

/**
 * Runs one item as a normal top-level run: its own record (linked to the batch), its span, its
 * `item.start` and `item.end` events; its result line once the record is closed.
 */
export async function runItem(runner: ItemRunner, item: BatchItem, signal: AbortSignal): Promise<ItemEnd> {
  const startedAt = Date.now();
  const where = { path: runner.spec.name, agent: runner.spec.name, depth: 0 };
  runner.emit({ ...where, time: startedAt, type: 'item.start', key: item.key, line: item.line });
  let record: OpenRecord | undefined;
  const traced = runner.trace?.item(item, startedAt, () => record?.recorder.id);
  const emit: EmitEvent = (event: RunEvent) => {
    runner.emit(event);
    record?.recorder.observe(event);
    traced?.observe(event);
  };
  const warn = (message: string) => emit({ ...where, time: Date.now(), type: 'warning', message });
  if (runner.records) {
    const { globalConfig, env, request } = runner.records;
    record = openRunRecord(
      globalConfig,
      env,
      { ...request, input: item.message, inputs: item.inputs },
      { batch: runner.batchId },
      warn,
    );
  }
  const outcome: RunOutcome = await runTopLevel({
    ...runner.base,
    input: item.message,
    inputs: item.inputs,
    startedAt,
    signal,
    emit,
    shared: runner.shared,
    ...(runner.budget ? { sharedBudget: runner.budget } : {}),
    ...(traced ? { trace: traced.links } : {}),
  });
  let runId: string | undefined;
  if (record) {
    await record.recorder.finish(outcome, outcome.error?.exitCode ?? 0);
    runId = (await record.recorder.created()) || undefined;
  }
  const interrupted = outcome.result.status === 'cancelled' && signal.aborted;
  const line = resultLine(item, outcome, runId, Date.now() - startedAt, runner.costOf(outcome.result));
  traced?.end({ status: line.status, error: line.error, ...(runId ? { runId } : {}) }, Date.now());
  runner.emit({
    ...where,
    time: Date.now(),
    type: 'item.end',
    key: item.key,
    line: item.line,
    status: line.status,
    durationMs: line.duration_ms,
  });
  return { line, interrupted };
}
