import { resolve } from 'node:path';
import { batchEnding } from '../internal/batch/ending.js';
import { renderList, renderReport } from '../internal/batch/report.js';
import { jsonLine } from '../internal/batch/result-line.js';
import { openResultSink, type ResultSink } from '../internal/batch/result-sink.js';
import { refuseUnpriced } from '../internal/batch/session.js';
import { loadGlobalConfig } from '../internal/config/global.js';
import {
  CancelledError,
  ConfigError,
  ExitCode,
  errorMessage,
  type StopSignal,
  signalExitCode,
} from '../internal/errors.js';
import { pricing } from '../internal/prices/index.js';
import {
  cancelQueuedBatch,
  eachQueuedResult,
  listQueuedBatches,
  type QueuedBatchReport,
  removeQueuedBatch,
  resumeQueuedBatch,
  showQueuedBatch,
} from '../internal/queue/control.js';
import { openQueue, type QueueDb } from '../internal/queue/db.js';
import { enqueueBatch, type QueuedBatchRequest } from '../internal/queue/enqueue.js';
import { findQueuedBatch } from '../internal/queue/store.js';
import type { QueueUrl } from '../internal/queue/url.js';
import { waitForBatch } from '../internal/queue/wait.js';
import { maskSecrets } from '../internal/secrets.js';
import { firstGiven, lastValue } from './argv.js';
import { stderr, stdout } from './stdio.js';

/** The queue of a batch command, and whether `--queue` named it (else `AXE_QUEUE` did). */
export interface QueueRef {
  url: QueueUrl;
  fromFlag: boolean;
}

/** Flags of a local batch that have no meaning when workers run the items. */
const NOT_WITH_QUEUE: readonly (readonly [string, string, string])[] = [
  ['concurrency', '--concurrency', 'each worker runs its own number of items (axe worker --concurrency)'],
  ['record', '--record', 'the workers call the providers'],
  ['replay', '--replay', 'the workers call the providers'],
  ['events', '--events', "the items' events happen on the workers"],
  ['progress', '--progress', 'axe batches show tells where the batch stands'],
];

/** `axe run <agent> --map FILE --queue URL [--wait]`: stores the batch; with `--wait`, prints it as it ends. */
export async function enqueueCommand(
  queue: QueueRef,
  options: Record<string, unknown>,
  asked: QueuedBatchRequest,
): Promise<number> {
  const notWithQueue = firstGiven(options, NOT_WITH_QUEUE);
  if (notWithQueue)
    throw new ConfigError(`${notWithQueue[1]} cannot be used with --queue: ${notWithQueue[2]}`);
  const argv = process.argv.slice(2);
  const wait = options.wait === true;
  const outFlag = typeof options.out === 'string' ? lastValue(argv, options.out, ['--out']) : undefined;
  if (outFlag !== undefined && !wait) {
    throw new ConfigError(
      '--out needs --wait with --queue: without it, axe batches show --results prints the lines',
    );
  }
  const { url } = queue;
  if (asked.maxCostUsd !== undefined) {
    // The workers price with their own tables; the model must have a price here too, as locally.
    refuseUnpriced(asked.spec, asked.model, pricing(await loadGlobalConfig(asked.configDir), asked.env));
  }
  const db = await openQueue(url);
  // Installed once connected: Ctrl-C while connecting ends the process as usual.
  const interrupt = interruptions();
  let sink: ResultSink | undefined;
  try {
    // Opened before the batch is stored: an --out that cannot be written stores nothing.
    if (wait)
      sink = openResultSink(outFlag !== undefined ? resolve(outFlag) : undefined, asked.outFormat, stdout);
    const { id, items } = await enqueueBatch(db, {
      signal: interrupt.signal,
      ...asked,
      ...(asked.input.file === '-' ? { stdin: process.stdin } : {}),
    });
    stderr.write(`axe: batch ${id}: ${items} items queued\n`);
    if (sink === undefined) return ExitCode.ok;
    const suffix = queue.fromFlag ? ` --queue ${url.masked}` : '';
    const out = sink;
    try {
      const ended = await waitForBatch(
        db,
        id,
        interrupt.signal,
        (result) => out.write(result),
        (error) =>
          stderr.write(
            `axe: batch ${id}: PostgreSQL at ${url.host} is away (${errorMessage(error)}): waiting for it\n`,
          ),
      );
      const ending = batchEnding({
        id,
        counts: ended.counts,
        ...(ended.state === 'cancelled' ? { cancelled: true } : {}),
        ...(ended.stoppedBy !== undefined ? { stoppedBy: ended.stoppedBy } : {}),
        commandSuffix: suffix,
      });
      for (const line of ending.lines) stderr.write(`${line}\n`);
      return ending.code;
    } catch (error) {
      if (!(error instanceof CancelledError) || interrupt.received === undefined) throw error;
      const ending = batchEnding({
        id,
        counts: { completed: 0, failed: 0, skipped: 0 },
        signal: interrupt.received,
        interruptedNote: `still running on the workers (axe batches show ${id}${suffix})`,
      });
      for (const line of ending.lines) stderr.write(`${line}\n`);
      return ending.code;
    }
  } finally {
    sink?.close();
    interrupt.off();
    await db.close();
  }
}

/** `axe batches list|show|cancel|resume|rm --queue URL` (or with AXE_QUEUE). */
export async function queueBatchesCommand(
  queue: QueueRef,
  action: string,
  ref: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  if (!['list', 'show', 'cancel', 'resume', 'rm'].includes(action)) {
    throw new ConfigError(`unknown batches action "${action}": expected list, show, cancel, resume or rm`);
  }
  if (action !== 'list' && ref === undefined) {
    throw new ConfigError(
      `missing <batch> for "batches ${action}": a batch id, a unique prefix of one, or last`,
    );
  }
  for (const [key, flag] of [
    ['force', '--force'],
    ['out', '--out'],
    ['events', '--events'],
    ['progress', '--progress'],
  ] as const) {
    if (options[key] !== undefined && options[key] !== false)
      throw new ConfigError(`${flag} cannot be used with --queue (a batch on a queue runs on its workers)`);
  }
  const { url } = queue;
  const db = await openQueue(url);
  try {
    return await control(db, action, ref ?? '', options);
  } finally {
    await db.close();
  }
}

async function control(
  db: QueueDb,
  action: string,
  ref: string,
  options: Record<string, unknown>,
): Promise<number> {
  if (action === 'list') {
    const reports = await listQueuedBatches(db);
    stdout.write(
      options.json === true
        ? `${maskSecrets(JSON.stringify(reports))}\n`
        : maskSecrets(renderList(reports, (report) => report.state)),
    );
    return ExitCode.ok;
  }
  const id = await findQueuedBatch(db.query, ref, db.where);
  if (action === 'show') {
    if (options.results === true) {
      await eachQueuedResult(db, id, (result) => stdout.write(jsonLine(result)));
      return ExitCode.ok;
    }
    const report = await showQueuedBatch(db, id);
    stdout.write(
      options.json === true
        ? `${maskSecrets(JSON.stringify(report))}\n`
        : maskSecrets(renderQueuedReport(report)),
    );
    return ExitCode.ok;
  }
  if (action === 'cancel') {
    const { cancelled, state } = await cancelQueuedBatch(db, id);
    stderr.write(
      cancelled
        ? `axe: batch ${id}: cancelled (its running items end on their workers)\n`
        : `axe: batch ${id}: already ${state}\n`,
    );
    return ExitCode.ok;
  }
  if (action === 'resume') {
    const { requeued, items } = await resumeQueuedBatch(db, id, {
      retryFailed: options.retryFailed === true,
    });
    stderr.write(`axe: batch ${id}: ${requeued} of ${items} items queued again\n`);
    return ExitCode.ok;
  }
  await removeQueuedBatch(db, id);
  return ExitCode.ok;
}

/** `show`: a local batch's report, then where it stands on the queue. */
function renderQueuedReport(report: QueuedBatchReport): string {
  const stopped = report.stopped_by !== null ? ` by ${report.stopped_by}` : '';
  return `${renderReport(report)}  state: ${report.state}${stopped}; ${report.workers.running} workers running its items (${report.workers.ran} in all); ${report.duplicates} duplicates discarded\n`;
}

/**
 * Ctrl-C, SIGTERM and SIGHUP while talking to the queue: they abort its waits (a connection, a
 * `--wait`), and `received` says which came.
 */
function interruptions(): { signal: AbortSignal; received: StopSignal | undefined; off: () => void } {
  const controller = new AbortController();
  const state: { signal: AbortSignal; received: StopSignal | undefined; off: () => void } = {
    signal: controller.signal,
    received: undefined,
    off: () => {
      for (const name of signals) process.off(name, on);
    },
  };
  const on = (name: StopSignal) => {
    // A second one while the first is being handled (closing the connections): exit now.
    if (state.received !== undefined) process.exit(signalExitCode(name));
    state.received = name;
    controller.abort(new CancelledError('interrupted', name));
  };
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const name of signals) process.on(name, on);
  return state;
}
