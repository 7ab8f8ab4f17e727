import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { runItem } from '../batch/item-run.js';
import { isFailure, type ResultLine, unranLine } from '../batch/result-line.js';
import { type GlobalConfig, loadGlobalConfig } from '../config/global.js';
import { resolvePaths } from '../config/paths.js';
import { CancelledError, errorMessage } from '../errors.js';
import { fsPromises } from '../fs/promises.js';
import { createHttpPool } from '../provider/index.js';
import { runsToKeep } from '../record/run-record.js';
import { pruneRuns } from '../record/store.js';
import type { RunEvent } from '../runner/events.js';
import { openQueue, type Query, type QueueDb, retrying, type Tx } from './db.js';
import { claimItem, retryItem } from './item-states.js';
import { heartbeat, register, sweepDead, unregister, type WorkerRow } from './lease.js';
import { type JobData, QUEUE_PROTOCOL } from './protocol.js';
import { batchStates, handBack, insertResult, stopBatch } from './store.js';
import type { QueueUrl } from './url.js';
import { openWorkerBatch, readQueuedBatch, type WorkerBatch, type WorkerSide } from './worker-batch.js';

/** How often an idle worker looks for items, and a busy one checks its batches for a cancel. */
const IDLE_POLL_MS = 250;
const STATE_POLL_MS = 1000;
/** The heartbeat's shortest interval (a lease of one second beats three times in it). */
const HEARTBEAT_MIN_MS = 250;
/** Lines said once that a worker remembers, at most. */
const SAID_KEPT = 1000;
/** Items between two prunings of the run records (`[runs] keep`), as a local batch prunes at its end. */
const PRUNE_EVERY = 100;

export interface WorkerOptions {
  /** The queue's URL (checked by `parseQueueUrl`). */
  url: QueueUrl;
  /** Items run at once. */
  concurrency: number;
  /** Seconds: the heartbeat's lease, and the grace running items get when the worker stops. */
  leaseSeconds: number;
  /** Where stored agent trees are written. */
  workdir: string;
  /** Exit once nothing runs here and no batch this worker can run has a queued item. */
  exitWhenIdle: boolean;
  env: NodeJS.ProcessEnv;
  /** The worker's own lines (one per item, what it says once): cmd prints them on stderr. */
  say: (line: string) => void;
}

export interface WorkerControl {
  /** Take nothing more; running items get `--lease` seconds, then are handed back. */
  stop(): void;
  /** Hand the running items back now (a second Ctrl-C). */
  abandon(): void;
  done: Promise<void>;
}

/** A job this worker took, while it runs. */
interface Running {
  batchId: string;
  controller: AbortController;
  /** Why it was aborted: the batch was cancelled, or the worker stops. */
  why?: 'cancel' | 'shutdown';
}

/** A job as pg-boss hands it out. */
interface Job {
  id: string;
  data: JobData;
}

/**
 * `axe worker`: takes items of queued batches and runs each as a local batch item runs, with the
 * batch's stored agent tree and this machine's own environment and config.toml; writes each result
 * and completes its job in one transaction. See docs/scale.md.
 */
export async function startWorker(options: WorkerOptions): Promise<WorkerControl> {
  /** Ends every retry against the database: the worker is leaving for good. */
  const lifetime = new AbortController();
  let said: ((line: string) => void) | undefined;
  const db = await openQueue(options.url, {
    // A connection per running item's statements, and a few for the heartbeat, the polls and pg-boss.
    connections: options.concurrency + 4,
    maintenance: true,
    // pg-boss's timers and idle connections report a restart as 'error' events: a line, never a crash.
    onBackgroundError: (error) => said?.(`axe worker: PostgreSQL: ${errorMessage(error)}`),
  });
  const worker: WorkerRow = {
    id: `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    host: hostname(),
    pid: process.pid,
    protocol: QUEUE_PROTOCOL,
    leaseSeconds: options.leaseSeconds,
  };
  try {
    await retrying(lifetime.signal, () => register(db.query, worker));
  } catch (error) {
    await db.close();
    throw error;
  }
  const work = new Worker(options, db, worker, lifetime);
  said = (line) => work.sayOnce(line);
  options.say(
    `axe worker: ${worker.id} on ${db.where}: up to ${options.concurrency} items at once, lease ${options.leaseSeconds} s`,
  );
  return { stop: () => work.stop(), abandon: () => work.abandon(), done: work.run() };
}

class Worker {
  private readonly running = new Map<string, Running>();
  /** The running batches as last read, and when: a burst of items ending reads them once. */
  private batchList: { at: number; list: { id: string; protocol: number }[] } | undefined;
  private readonly batches = new Map<string, Promise<WorkerBatch>>();
  /** Batches of another protocol this worker said it leaves. */
  private readonly leftAlone = new Set<string>();
  private stopping = false;
  /** Waits that end early when a slot frees or the worker stops. */
  private readonly waiters = new Set<() => void>();
  private readonly side: WorkerSide;
  private readonly said = new Set<string>();
  private graceTimer: NodeJS.Timeout | undefined;
  /** Set once nothing runs and nothing more will: the heartbeat and the batch watch end. */
  private finished = false;
  private readonly finishedWaiters = new Set<() => void>();
  /** Aborted at Ctrl-C / SIGTERM: a fetch waiting for PostgreSQL gives up. */
  private readonly fetching = new AbortController();
  /** Aborted once the worker is done: the heartbeat's and the watch's calls give up. */
  private readonly duties = new AbortController();
  private giveUpTimer: NodeJS.Timeout | undefined;
  /** Items ended since the run records were last pruned, and the pruning under way. */
  private sincePrune = 0;
  private pruning: Promise<void> | undefined;
  /** Copies of finished batches' `work/` being removed. */
  private readonly removals = new Set<Promise<void>>();

  constructor(
    private readonly options: WorkerOptions,
    private readonly db: QueueDb,
    private readonly row: WorkerRow,
    private readonly lifetime: AbortController,
  ) {
    const { env } = options;
    let config: ReturnType<typeof loadGlobalConfig> | undefined;
    this.side = {
      workerId: row.id,
      env,
      globalConfig: () => {
        config ??= loadGlobalConfig(resolvePaths(env).configDir);
        return config;
      },
      pool: createHttpPool(),
      workdir: options.workdir,
      emit: (event: RunEvent) => {
        if (event.type === 'warning') this.sayOnce(`axe worker: warning: ${event.message}`);
      },
    };
  }

  /** A statement, again through a restart of PostgreSQL (until `signal`: by default, until the worker leaves). */
  private call<T>(statement: (query: Query) => Promise<T>, signal = this.lifetime.signal): Promise<T> {
    return retrying(signal, () => statement(this.db.query), this.away);
  }

  /** A transaction, run again whole when its connection was lost. */
  private inTx<T>(work: (tx: Tx) => Promise<T>, signal = this.lifetime.signal): Promise<T> {
    return retrying(signal, () => this.db.tx(work), this.away);
  }

  private readonly away = (error: Error, attempt: number): void => {
    if (attempt === 1)
      this.sayOnce(
        `axe worker: PostgreSQL at ${this.db.where} is away (${errorMessage(error)}): trying again`,
      );
  };

  stop(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.fetching.abort();
    this.wake();
    const lease = this.options.leaseSeconds * 1000;
    this.graceTimer = setTimeout(() => this.abandon(), lease);
    this.graceTimer.unref();
    // Handing back needs PostgreSQL: gone for another lease, it is given up on (a sweep elsewhere
    // hands the items back once this worker's heartbeat is old).
    this.giveUpTimer = setTimeout(() => this.lifetime.abort(new CancelledError('interrupted')), 2 * lease);
    this.giveUpTimer.unref();
  }

  abandon(): void {
    this.stop();
    for (const job of this.running.values()) this.abort(job, 'shutdown');
    this.wake();
  }

  async run(): Promise<void> {
    const beats = this.keepAlive();
    const polls = this.watchBatches();
    try {
      await this.fetchLoop().catch((error: unknown) => {
        if (!this.fetching.signal.aborted) throw error;
      });
      while (this.running.size > 0) await this.nextChange(IDLE_POLL_MS);
    } finally {
      clearTimeout(this.graceTimer);
      this.stopping = true;
      this.fetching.abort();
      this.duties.abort();
      this.finished = true;
      for (const waiter of this.finishedWaiters) waiter();
      this.wake();
      await Promise.allSettled([beats, polls]);
      await this.leave();
    }
  }

  /** While a slot is free: take jobs of the runnable batches, oldest batch first. */
  private async fetchLoop(): Promise<void> {
    while (!this.stopping) {
      const free = this.options.concurrency - this.running.size;
      if (free > 0) {
        const batches = await this.runningBatches(this.options.exitWhenIdle && this.running.size === 0);
        this.forget(batches);
        const ours: string[] = [];
        let took = 0;
        for (const batch of batches) {
          if (batch.protocol !== QUEUE_PROTOCOL) {
            this.leaveAlone(batch.id, batch.protocol);
            continue;
          }
          ours.push(batch.id);
          if (took >= free || this.stopping) continue;
          for (const job of await this.fetch(batch.id, free - took)) {
            took++;
            this.start(job);
          }
        }
        if (took > 0) continue;
        if (this.options.exitWhenIdle && this.running.size === 0) {
          // Only when there was nothing to take: whether anything is left to run at all.
          if (!(await this.call((query) => anyQueued(query, ours), this.fetching.signal))) return;
        }
      }
      await this.nextChange(IDLE_POLL_MS);
    }
  }

  /**
   * The running batches, read again when the last read is older than the idle poll (or `fresh`:
   * before an idle worker decides to exit), so that items ending together cost one read.
   */
  private async runningBatches(fresh: boolean): Promise<{ id: string; protocol: number }[]> {
    const now = Date.now();
    if (fresh || !this.batchList || now - this.batchList.at >= IDLE_POLL_MS) {
      this.batchList = { at: now, list: await this.call(runningBatches, this.fetching.signal) };
    }
    return this.batchList.list;
  }

  /** Up to `count` jobs of a batch (pg-boss finds none while PostgreSQL is away: the next round tries again). */
  private fetch(batchId: string, count: number): Promise<Job[]> {
    return this.call(() => this.db.jobs.fetch(batchId, count), this.fetching.signal);
  }

  private start(job: Job): void {
    const running: Running = { batchId: job.data.batch, controller: new AbortController() };
    this.running.set(job.id, running);
    void this.runJob(job, running)
      .catch((error: unknown) => {
        // Only a database gone for good gets here (every call retries until the worker leaves):
        // the item stays `running` under this worker, and a sweep hands it back once its lease is over.
        this.sayOnce(`axe worker: ${job.data.batch} line ${job.data.idx + 1}: ${errorMessage(error)}`);
      })
      .finally(() => {
        this.running.delete(job.id);
        this.wake();
      });
  }

  private async runJob(job: Job, running: Running): Promise<void> {
    const { batch: batchId, idx } = job.data;
    const claim = await this.call((query) => claimItem(query, batchId, idx, this.row.id));
    if (!claim.claimed) {
      // Delivered again after its result was stored (or its batch was deleted): nothing to run.
      if (claim.state !== 'running') await this.call(() => this.db.jobs.complete(batchId, [job.id]));
      return;
    }
    const { item } = claim;
    const startedAt = Date.now();
    let batch: WorkerBatch | undefined;
    let line: ResultLine | undefined;
    let interrupted = false;
    try {
      batch = await this.batch(batchId);
    } catch (error) {
      line = unranLine(item, 'error', `the batch's stored agent cannot run here: ${errorMessage(error)}`);
    }
    if (batch) ({ line, interrupted } = await runItem(batch.runner, item, running.controller.signal));
    line ??= unranLine(item, 'error', 'the batch is gone');
    const took = `in ${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
    const where = `axe worker: ${batchId} line ${item.line} (key ${item.key})`;
    if (interrupted && running.why === 'shutdown') {
      // Stopped with the worker: neither an attempt nor a result; another worker runs it.
      await this.inTx((tx) => handBack(tx, batchId, [idx]));
      this.options.say(`${where}: handed back`);
      return;
    }
    const failure = isFailure(line.status);
    const retries = batch?.row.retries ?? 0;
    if (
      failure &&
      !interrupted &&
      claim.attempts < retries &&
      (await this.inTx((tx) => retryItem(tx, batchId, idx, job.id, this.row.id)))
    ) {
      this.options.say(
        `${where}: ${line.status} ${took} (to run again: retry ${claim.attempts + 1} of ${retries})`,
      );
      return;
    }
    const result = line;
    const stored = await this.inTx(async (tx) => {
      const outcome = await insertResult(tx, batchId, idx, result, this.row.id);
      await tx.jobs.complete(batchId, [job.id]);
      return outcome;
    });
    this.options.say(
      `${where}: ${line.status} ${took}${stored === 'duplicate' ? " (discarded: another worker's result came first)" : ''}`,
    );
    if (batch?.runner.records && ++this.sincePrune >= PRUNE_EVERY) this.prune(batch.runner.records);
  }

  /**
   * The oldest run records beyond `[runs] keep` go, every hundred items: a worker never ends the
   * way a local batch does, where they go once.
   */
  private prune(records: { runsDir: string; globalConfig: () => Promise<GlobalConfig> }): void {
    if (this.pruning) return;
    this.sincePrune = 0;
    this.pruning = (async () => {
      try {
        await pruneRuns(records.runsDir, await runsToKeep(records.globalConfig));
      } catch (error) {
        this.sayOnce(
          `axe worker: run records: cannot remove old runs in ${records.runsDir} (${errorMessage(error)})`,
        );
      } finally {
        this.pruning = undefined;
      }
    })();
  }

  /** The batch's runner on this worker, made on its first item. */
  private batch(batchId: string): Promise<WorkerBatch> {
    let made = this.batches.get(batchId);
    if (!made) {
      made = (async () => {
        const row = await this.call((query) => readQueuedBatch(query, batchId));
        if (!row) throw new Error(`batch ${batchId} was deleted`);
        return openWorkerBatch(row, this.side, (sha256) => this.call((query) => readBlob(query, sha256)), {
          run: (signal, statement) => this.call(statement, signal),
          lifetime: this.lifetime.signal,
          stop: async (reason) => {
            await this.inTx((tx) => stopBatch(tx, batchId, reason));
          },
          warn: (message) => this.sayOnce(`axe worker: ${message}`),
        });
      })();
      // A batch that could not be made ready is tried again by its next item.
      made.catch(() => this.batches.delete(batchId));
      this.batches.set(batchId, made);
    }
    return made;
  }

  /**
   * Batches no longer running, with nothing running here, are dropped: their runner, and their copy
   * of `work/` (what their items' tools wrote there; a resumed batch gets a fresh copy).
   */
  private forget(running: readonly { id: string }[]): void {
    const keep = new Set(running.map((batch) => batch.id));
    for (const job of this.running.values()) keep.add(job.batchId);
    for (const id of this.batches.keys()) {
      if (keep.has(id)) continue;
      this.batches.delete(id);
      const dir = join(this.options.workdir, 'batches', id);
      const removed = fsPromises()
        .rm(dir, { recursive: true, force: true })
        .catch((error: unknown) => this.sayOnce(`axe worker: cannot remove ${dir} (${errorMessage(error)})`));
      this.removals.add(removed);
      void removed.finally(() => this.removals.delete(removed));
    }
  }

  private leaveAlone(batchId: string, protocol: number): void {
    if (this.leftAlone.has(batchId)) return;
    this.leftAlone.add(batchId);
    this.options.say(
      `axe worker: batch ${batchId} needs queue protocol ${protocol}; this axe speaks ${QUEUE_PROTOCOL}: left for another worker`,
    );
  }

  /**
   * Every lease/3 seconds: the heartbeat, then the sweep of workers whose lease ran out (their
   * items queued again and their jobs failed, in one transaction, so pg-boss hands them out again).
   */
  private async keepAlive(): Promise<void> {
    const every = Math.max(HEARTBEAT_MIN_MS, (this.options.leaseSeconds * 1000) / 3);
    while (!this.finished) {
      await this.quietly(async () => {
        await this.call((query) => heartbeat(query, this.row), this.duties.signal);
        await this.inTx(sweepDead, this.duties.signal);
      });
      await this.pause(every);
    }
  }

  /** Every second while items run here: a cancelled (or deleted) batch's items are aborted. */
  private async watchBatches(): Promise<void> {
    while (!this.finished) {
      const ids = [...new Set([...this.running.values()].map((job) => job.batchId))];
      if (ids.length > 0) {
        await this.quietly(async () => {
          const states = await this.call((query) => batchStates(query, ids), this.duties.signal);
          for (const job of this.running.values()) {
            const state = states.get(job.batchId);
            if (state === undefined || state === 'cancelled') this.abort(job, 'cancel');
          }
        });
      }
      await this.pause(STATE_POLL_MS);
    }
  }

  private abort(job: Running, why: 'cancel' | 'shutdown'): void {
    if (job.controller.signal.aborted) return;
    job.why = why;
    job.controller.abort(
      why === 'cancel' ? new CancelledError('cancelled') : new CancelledError('interrupted', 'SIGTERM'),
    );
  }

  /** Ends the waits of `nextChange`: a slot is free, or the worker stops. */
  private wake(): void {
    for (const waiter of this.waiters) waiter();
    this.waiters.clear();
  }

  /** Resolves after `ms`, or sooner when a slot frees or the worker stops. */
  private nextChange(ms: number): Promise<void> {
    return this.waitOn(this.waiters, ms);
  }

  /** Resolves after `ms`, or sooner when the worker is done. */
  private pause(ms: number): Promise<void> {
    return this.finished ? Promise.resolve() : this.waitOn(this.finishedWaiters, ms);
  }

  private waitOn(waiters: Set<() => void>, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }

  /** Runs a periodic duty; its failure (the database gone for good) is said once, not thrown. */
  private async quietly(duty: () => Promise<void>): Promise<void> {
    try {
      await duty();
    } catch (error) {
      if (!this.duties.signal.aborted) this.sayOnce(`axe worker: ${errorMessage(error)}`);
    }
  }

  /** The worker leaves: budgets' releases written, its row gone, the pool and the database closed. */
  private async leave(): Promise<void> {
    // The calls on the way out get one more lease; then the database is given up on.
    const giveUp = setTimeout(
      () => this.lifetime.abort(new CancelledError('interrupted')),
      this.options.leaseSeconds * 1000,
    );
    giveUp.unref();
    try {
      for (const made of this.batches.values()) await (await made.catch(() => undefined))?.budget?.settled();
      await this.pruning;
      await Promise.all(this.removals);
      await this.quietly(() => this.call((query) => unregister(query, this.row.id)));
    } finally {
      clearTimeout(giveUp);
      clearTimeout(this.giveUpTimer);
      this.lifetime.abort(new CancelledError('interrupted'));
      await this.side.pool.close();
      await this.db.close();
    }
  }

  sayOnce(line: string): void {
    if (this.said.has(line)) return;
    // A long-lived worker does not keep every line it ever said.
    if (this.said.size >= SAID_KEPT) this.said.clear();
    this.said.add(line);
    this.options.say(line);
  }
}

/**
 * The running batches, oldest first, whatever their protocol. Their items are not looked at: a
 * batch with none queued gives no job, and looking for a queued item of a long batch costs a scan
 * of its finished ones at every free slot.
 */
function runningBatches(query: Query): Promise<{ id: string; protocol: number }[]> {
  return query<{ id: string; protocol: number }>(
    "SELECT id, protocol FROM axe.batches WHERE state = 'running' ORDER BY created_at, id",
  );
}

/** Whether any of `batchIds` has an item still to run. */
async function anyQueued(query: Query, batchIds: readonly string[]): Promise<boolean> {
  if (batchIds.length === 0) return false;
  const rows = await query(
    "SELECT 1 FROM axe.items WHERE batch_id = ANY($1::text[]) AND state = 'queued' LIMIT 1",
    [batchIds],
  );
  return rows.length > 0;
}

async function readBlob(query: Query, sha256: string): Promise<Buffer> {
  const [row] = await query<{ content: Buffer }>('SELECT content FROM axe.blobs WHERE sha256 = $1', [sha256]);
  if (!row) throw new Error(`the stored file ${sha256} is missing`);
  return row.content;
}
