/**
 * axe's tables in PostgreSQL (schema `axe`; pg-boss keeps its own in `axe_boss`). pg-boss hands the
 * items out; these hold what it does not: the batch as asked, its items, the one result of each,
 * the workers alive, and the budget held by the calls in flight.
 *
 * Each entry of MIGRATIONS takes the schema from its index to the next version; `migrate` runs the
 * missing ones in one transaction under an advisory lock, so that many workers starting at once
 * migrate once.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE SCHEMA IF NOT EXISTS axe;
  CREATE TABLE axe.meta (version int NOT NULL);
  INSERT INTO axe.meta (version) VALUES (0);
  -- The files of the agent trees, by their content's sha256: a tree used by many batches is stored once.
  CREATE TABLE axe.blobs (sha256 text PRIMARY KEY, content bytea NOT NULL);
  CREATE TABLE axe.batches (
    id text PRIMARY KEY,
    protocol int NOT NULL,
    -- running | stopped (a cap) | cancelled | done
    state text NOT NULL DEFAULT 'running',
    stopped_by text,
    agent text NOT NULL,
    tree jsonb NOT NULL,
    request jsonb NOT NULL,
    items int NOT NULL,
    retries int NOT NULL DEFAULT 0,
    max_tokens bigint,
    max_cost_usd double precision,
    max_failures int,
    spent_tokens bigint NOT NULL DEFAULT 0,
    spent_usd double precision NOT NULL DEFAULT 0,
    reserved_tokens bigint NOT NULL DEFAULT 0,
    reserved_usd double precision NOT NULL DEFAULT 0,
    in_flight int NOT NULL DEFAULT 0,
    -- Items with a result, and those of them that failed (for --max-failures).
    done int NOT NULL DEFAULT 0,
    failed int NOT NULL DEFAULT 0,
    duplicates int NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
  );
  CREATE TABLE axe.items (
    batch_id text NOT NULL REFERENCES axe.batches (id) ON DELETE CASCADE,
    idx int NOT NULL,
    key text NOT NULL,
    item jsonb NOT NULL,
    -- queued | running | done
    state text NOT NULL DEFAULT 'queued',
    worker_id text,
    attempts int NOT NULL DEFAULT 0,
    generation int NOT NULL DEFAULT 0,
    PRIMARY KEY (batch_id, idx),
    UNIQUE (batch_id, key)
  );
  CREATE INDEX items_running ON axe.items (worker_id) WHERE state = 'running';
  CREATE TABLE axe.results (
    batch_id text NOT NULL REFERENCES axe.batches (id) ON DELETE CASCADE,
    idx int NOT NULL,
    key text NOT NULL,
    status text NOT NULL,
    -- The result line as JSON text, exactly as a local batch writes it (jsonb would reorder its keys).
    result text NOT NULL,
    worker_id text,
    finished_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (batch_id, idx)
  );
  CREATE TABLE axe.workers (
    id text PRIMARY KEY,
    host text NOT NULL,
    pid int NOT NULL,
    protocol int NOT NULL,
    lease_seconds int NOT NULL,
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE axe.holds (
    id bigserial PRIMARY KEY,
    batch_id text NOT NULL REFERENCES axe.batches (id) ON DELETE CASCADE,
    worker_id text NOT NULL,
    tokens bigint NOT NULL,
    usd double precision NOT NULL
  );
  CREATE INDEX holds_worker ON axe.holds (worker_id);
  `,
];

/** The schema version this axe writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Any key: it only has to be the same for every axe, and unlikely to be another program's. */
const MIGRATION_LOCK = 0x61786531;

/** What `migrate` needs of a connection: one client, so the lock and the transaction are one session's. */
export interface SqlClient {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[] }>;
}

/**
 * Brings axe's tables to SCHEMA_VERSION. Returns the version found; a database newer than this axe
 * (a later axe migrated it) is left alone, and the caller refuses it.
 */
export async function migrate(client: SqlClient): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const { rows } = await client.query<{ found: string | null }>(
      "SELECT to_regclass('axe.meta')::text AS found",
    );
    let version = 0;
    if (rows[0]?.found) {
      const meta = await client.query<{ version: number }>('SELECT version FROM axe.meta');
      version = meta.rows[0]?.version ?? 0;
    }
    const found = version;
    for (; version < SCHEMA_VERSION; version++) await client.query(MIGRATIONS[version] as string);
    if (version !== found) await client.query('UPDATE axe.meta SET version = $1', [version]);
    await client.query('COMMIT');
    return found;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  }
}

/** `fn` while `client`'s session holds the migration lock: one axe at a time sets pg-boss up. */
export async function whileMigrating<T>(client: SqlClient, fn: () => Promise<T>): Promise<T> {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
  const result = await fn();
  await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
  return result;
}
