import type { Pool, PoolClient } from 'pg';
import type PgBoss from 'pg-boss';
import { sleep } from '../abort.js';
import { AxeError, ConfigError, ExitCode, errorMessage } from '../errors.js';
import { BOSS_SCHEMA, type JobData, queueName } from './protocol.js';
import { migrate, SCHEMA_VERSION, whileMigrating } from './schema.js';
import type { QueueUrl } from './url.js';

/** PostgreSQL could not be used when the command started: not there, refusing us, or no such database (exit 3). */
class QueueUnreachableError extends AxeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.provider, options);
  }
}

/** A connection as pg-boss takes it, so that its command runs on ours (inside our transaction). */
interface BossConnection {
  db: { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> };
}

/** pg-boss's commands on the jobs of a batch's queue, on one connection. */
export interface Jobs {
  /** Jobs with known ids: one already there is left as it is (queueing again adds nothing). */
  insert(batchId: string, jobs: readonly { id: string; data: JobData }[]): Promise<void>;
  complete(batchId: string, ids: readonly string[]): Promise<void>;
  /** Back to pg-boss's retry state (it runs again), while the queue's retry limit allows. */
  fail(batchId: string, ids: readonly string[]): Promise<void>;
  cancel(batchId: string, ids: readonly string[]): Promise<void>;
}

/** One statement's rows. */
export type Query = <R extends Record<string, unknown> = Record<string, unknown>>(
  text: string,
  values?: unknown[],
) => Promise<R[]>;

/** A transaction: its statements, and the same connection for pg-boss's commands to join it. */
export interface Tx {
  query: Query;
  jobs: Jobs;
}

/** An open queue: the pool, pg-boss on the same pool, and the URL only as it may be shown. */
export interface QueueDb {
  /** The masked URL. */
  where: string;
  query: Query;
  /** `fn` inside BEGIN … COMMIT on one connection; rolled back when it throws. */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  jobs: Jobs & {
    /** Up to `count` jobs of the batch's queue, now active (SKIP LOCKED: no two workers get one job). */
    fetch(batchId: string, count: number): Promise<{ id: string; data: JobData }[]>;
    /** The batch's queue; `expireInSeconds` is pg-boss's own backstop for a job no worker hands back. */
    createQueue(batchId: string, expireInSeconds: number): Promise<void>;
    deleteQueue(batchId: string): Promise<void>;
  };
  close(): Promise<void>;
}

export interface OpenOptions {
  /** Connections the process may hold (a worker: its concurrency and a few for heartbeats and polls). */
  connections?: number;
  /** pg-boss's maintenance (expiry of lost jobs, archiving): workers run it, one-shot commands do not. */
  maintenance?: boolean;
  /** Errors of idle connections and of pg-boss's own timers (PostgreSQL restarted): for a log line, never thrown. */
  onBackgroundError?: (error: Error) => void;
}

/**
 * Opens the queue at `url`: a pool (pg, loaded only here), axe's tables brought to this version,
 * pg-boss started on the same pool. A database that cannot be reached or used now is a
 * QueueUnreachableError naming host:port (exit 3); one set up by a newer axe is refused (exit 2).
 */
export async function openQueue(url: QueueUrl, options: OpenOptions = {}): Promise<QueueDb> {
  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url.url,
    max: options.connections ?? 4,
    connectionTimeoutMillis: 10_000,
    application_name: 'axe',
  });
  const background = (error: Error) => options.onBackgroundError?.(error);
  // An idle connection dropped by the server (a restart) is an event, not a crash: the pool makes a new one.
  pool.on('error', background);
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    await pool.end().catch(() => {});
    // The server answered but refused (no such database, a wrong password): it is there, not usable.
    const verb = isConnectionError(error) || !hasSqlState(error) ? 'reach' : 'use';
    throw new QueueUnreachableError(`cannot ${verb} PostgreSQL at ${url.host} (${reason(error)})`, {
      cause: error,
    });
  }
  try {
    const found = await migrate(client);
    if (found > SCHEMA_VERSION) {
      throw new ConfigError(
        `${url.masked}: its axe tables are of a newer axe (schema ${found}; this axe knows ${SCHEMA_VERSION}): upgrade axe`,
      );
    }
  } catch (error) {
    client.release();
    await pool.end().catch(() => {});
    if (error instanceof AxeError) throw error;
    throw new QueueUnreachableError(`cannot use PostgreSQL at ${url.host} (${reason(error)})`, {
      cause: error,
    });
  }
  const query: Query = async (text, values) => (await pool.query(text, values)).rows;
  const { default: PgBossClass } = await import('pg-boss');
  const boss = new PgBossClass({
    db: { executeSql: (text: string, values?: unknown[]) => pool.query(text, values) },
    schema: BOSS_SCHEMA,
    supervise: options.maintenance === true,
    schedule: false,
    migrate: true,
  });
  boss.on('error', background);
  try {
    // pg-boss creates its tables under a lock of its own, yet workers starting together on a new
    // database still collided on its schema (23505 on pg_namespace): one start at a time here.
    await whileMigrating(client, () => boss.start());
    client.release();
  } catch (error) {
    // Destroyed, not given back: its session's lock goes with it.
    client.release(true);
    await pool.end().catch(() => {});
    throw new QueueUnreachableError(`cannot use PostgreSQL at ${url.host} (${reason(error)})`, {
      cause: error,
    });
  }
  const jobs = jobCommands(boss, undefined);
  return {
    where: url.masked,
    query,
    tx: (fn) => transaction(pool, boss, fn),
    jobs: {
      ...jobs,
      fetch: async (batchId, count) =>
        (await boss.fetch<JobData>(queueName(batchId), { batchSize: count })).map(({ id, data }) => ({
          id,
          data,
        })),
      createQueue: (batchId, expireInSeconds) =>
        queueDdl(pool, boss, () =>
          boss.createQueue(queueName(batchId), {
            name: queueName(batchId),
            // A job is handed back (not failed) whenever its worker is gone or stops: the item's own
            // retries are counted by axe (`--retries`), so pg-boss never gives up on a job.
            retryLimit: 1_000_000,
            retryDelay: 0,
            expireInSeconds: Math.min(MAX_EXPIRE_SECONDS, Math.max(1, Math.ceil(expireInSeconds))),
          }),
        ),
      deleteQueue: (batchId) =>
        queueDdl(pool, boss, async () => {
          // pg-boss's delete_queue fails on a queue that still holds jobs (its foreign key is
          // checked once the queue's row is gone): the jobs go first.
          await pool.query(`DELETE FROM ${BOSS_SCHEMA}.job WHERE name = $1`, [queueName(batchId)]);
          await boss.deleteQueue(queueName(batchId));
        }),
    },
    close: async () => {
      await boss.stop({ graceful: false, wait: true }).catch(() => {});
      await pool.end().catch(() => {});
    },
  };
}

/** Any key: the same for every axe, unlikely to be another program's. */
const QUEUE_DDL_LOCK = 0x61786532;

/**
 * `fn` (pg-boss making or dropping a queue's table) while no other axe does the same: two of
 * pg-boss's `create_queue` at once deadlock on the jobs table's foreign key. The lock is held by a
 * transaction of ours for as long as `fn` runs on another connection.
 */
function queueDdl<T>(pool: Pool, boss: PgBoss, fn: () => Promise<T>): Promise<T> {
  return transaction(pool, boss, async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [QUEUE_DDL_LOCK]);
    return fn();
  });
}

/** pg-boss refuses an expiry of 24 hours or more. */
const MAX_EXPIRE_SECONDS = 24 * 60 * 60 - 1;

/**
 * pg-boss's job commands for one batch's queue, on `connection` (a transaction's) or pg-boss's own.
 * `complete` and `fail` take `(name, ids, data, options)` at run time, whatever its typings say for a
 * list of ids: the options go fourth.
 */
function jobCommands(boss: PgBoss, connection: BossConnection | undefined): Jobs {
  const options = connection ?? {};
  type Settle = (name: string, ids: string[], data: undefined, options: object) => Promise<unknown>;
  const complete = boss.complete.bind(boss) as unknown as Settle;
  const fail = boss.fail.bind(boss) as unknown as Settle;
  return {
    insert: (batchId, jobs) =>
      boss.insert(
        // pg-boss hands out the highest priority first: items go out in input order, so `--wait`
        // can print early.
        jobs.map((job) => ({
          id: job.id,
          name: queueName(batchId),
          data: job.data,
          priority: -job.data.idx,
        })),
        options,
      ),
    complete: async (batchId, ids) => {
      if (ids.length > 0) await complete(queueName(batchId), [...ids], undefined, options);
    },
    fail: async (batchId, ids) => {
      if (ids.length > 0) await fail(queueName(batchId), [...ids], undefined, options);
    },
    cancel: async (batchId, ids) => {
      if (ids.length > 0) await boss.cancel(queueName(batchId), [...ids], options);
    },
  };
}

async function transaction<T>(pool: Pool, boss: PgBoss, fn: (tx: Tx) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  const query: Query = async (text, values) => (await client.query(text, values)).rows;
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn({
      query,
      jobs: jobCommands(boss, { db: { executeSql: (text, values) => client.query(text, values) } }),
    });
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (isConnectionError(error)) broken = error instanceof Error ? error : new Error(String(error));
    else await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    // A connection that failed mid-transaction is destroyed, not given back to the pool.
    client.release(broken);
  }
}

/** PostgreSQL's SQLSTATEs of a server going away or not yet taking connections. */
const CONNECTION_STATES = /^(08|57P0[123]|53300)/;
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
const CONNECTION_MESSAGES =
  /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect|Client was closed/i;

/** Whether `error` is the connection's (the server restarting, the network), not the statement's. */
function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || CONNECTION_STATES.test(code))) return true;
  return CONNECTION_MESSAGES.test(error.message);
}

const FIRST_BACKOFF_MS = 100;
const LAST_BACKOFF_MS = 5_000;

/**
 * `work()`, again after a connection error, with a backoff from 100 ms to 5 s, until it succeeds or
 * `signal` fires (then the signal's reason is thrown). Other errors are thrown at once. `onRetry`
 * hears each connection error (to say once that PostgreSQL is away).
 */
export async function retrying<T>(
  signal: AbortSignal,
  work: () => Promise<T>,
  onRetry?: (error: Error, attempt: number) => void,
): Promise<T> {
  let wait = FIRST_BACKOFF_MS;
  for (let attempt = 1; ; attempt++) {
    signal.throwIfAborted();
    try {
      return await work();
    } catch (error) {
      if (!isConnectionError(error) || signal.aborted) throw error;
      onRetry?.(error as Error, attempt);
      await sleep(wait, signal);
      wait = Math.min(wait * 2, LAST_BACKOFF_MS);
    }
  }
}

/** Whether `error` is the server's answer (a five-character SQLSTATE), not the network's. */
function hasSqlState(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** An error's reason, short: its code and message (a driver's messages name no password). */
function reason(error: unknown): string {
  const code = (error as { code?: unknown })?.code;
  const message = errorMessage(error) || 'no answer';
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
}
