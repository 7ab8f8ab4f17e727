import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, inject } from 'vitest';
import {
  PostgresUnavailable,
  portOf,
  query,
  startPostgresIn,
  stopPostgresIn,
  withDatabase,
} from './server.js';

/**
 * The tests' only way to PostgreSQL. A test file asks for a database of its own (`testDatabase`)
 * or a server of its own that it can stop and start (`startPrivatePostgres`). Either comes back as
 * a string when no server can be had here: the reason, for `skipBecause`.
 *
 * Which server: `AXE_TEST_PG_URL` when set (.ci/run starts one and sets it; `AXE_TEST_PG_UNAVAILABLE`
 * is its reason when it could not), else one of this test run's own, started by the first test
 * file that needs it in the directory test/pg/global-setup.ts made, and stopped by it at the end.
 */

declare module 'vitest' {
  interface ProvidedContext {
    /** Where this test run's PostgreSQL servers live (test/pg/global-setup.ts). */
    axePgRunDir: string;
  }
}

export interface TestDatabase {
  /** postgres://postgres@127.0.0.1:<port>/<a database of its own> */
  url: string;
}

export interface PrivatePostgres {
  /** The superuser URL of its `postgres` database. */
  url: string;
  port: number;
  /** Creates a fresh database on this server and returns its URL. */
  database(name?: string): Promise<string>;
  /** Stops the server (fast shutdown: its sessions are ended); the data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
}

const databases: { server: string; name: string }[] = [];
const privates: { dir: string }[] = [];
let counter = 0;

// Vitest evaluates this module afresh for each test file: what it made goes when the file ends.
afterAll(async () => {
  for (const { server, name } of databases.splice(0)) {
    await query(server, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).catch(() => {});
  }
  for (const { dir } of privates.splice(0)) {
    await stopPostgresIn(dir).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * A fresh, empty database on the test run's server: its URL, or why there is none. `name` (letters,
 * digits, `_`) goes into the database's name, to tell them apart in the server's log.
 */
export async function testDatabase(name = 'test'): Promise<TestDatabase | string> {
  let server: string;
  try {
    server = await sharedServer();
  } catch (error) {
    return unavailable(error);
  }
  return { url: await createDatabase(server, name) };
}

/**
 * A server of the caller's own (its own data directory and port) that the test can stop and start
 * again at the same place, or why there is none. Stopped and removed when the test file ends.
 */
export async function startPrivatePostgres(): Promise<PrivatePostgres | string> {
  const known = process.env.AXE_TEST_PG_UNAVAILABLE;
  if (known) return unavailable(new PostgresUnavailable(known));
  const dir = mkdtempSync(path.join(runDir(), 'private-'));
  privates.push({ dir });
  let url: string;
  try {
    url = await startPostgresIn(dir);
  } catch (error) {
    return unavailable(error);
  }
  const port = portOf(url);
  return {
    url,
    port,
    database: (databaseName = 'test') => createDatabase(url, databaseName),
    stop: () => stopPostgresIn(dir),
    start: async () => {
      await startPostgresIn(dir, port);
    },
  };
}

function unavailable(error: unknown): string {
  if (error instanceof PostgresUnavailable)
    return `no PostgreSQL for the tests: ${error.message.replace(/^cannot start PostgreSQL: /, '')}`;
  throw error;
}

async function createDatabase(server: string, name: string): Promise<string> {
  const database = `axe_${name.replace(/\W/g, '_').slice(0, 30)}_${process.pid}_${++counter}`.toLowerCase();
  await query(server, `CREATE DATABASE "${database}"`);
  databases.push({ server, name: database });
  return withDatabase(server, database);
}

function runDir(): string {
  const dir = inject('axePgRunDir');
  if (!dir) throw new Error('test/pg needs test/pg/global-setup.ts in vitest.config.ts globalSetup');
  return dir;
}

let shared: Promise<string> | undefined;

/** The URL of the test run's server, started by the first test file that asks. */
function sharedServer(): Promise<string> {
  shared ??= findSharedServer();
  return shared;
}

interface SharedOutcome {
  url?: string;
  unavailable?: string;
}

async function findSharedServer(): Promise<string> {
  const known = process.env.AXE_TEST_PG_UNAVAILABLE;
  if (known) throw new PostgresUnavailable(known);
  const given = process.env.AXE_TEST_PG_URL;
  if (given) return given;
  const dir = path.join(runDir(), 'shared');
  const outcomeFile = path.join(runDir(), 'shared.json');
  let starter = true;
  try {
    mkdirSync(path.join(runDir(), 'shared.lock'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    starter = false;
  }
  if (starter) {
    let outcome: SharedOutcome;
    try {
      outcome = { url: await startPostgresIn(dir) };
    } catch (error) {
      if (!(error instanceof PostgresUnavailable)) throw error;
      outcome = { unavailable: error.message };
    }
    writeFileSync(`${outcomeFile}.tmp`, JSON.stringify(outcome));
    renameSync(`${outcomeFile}.tmp`, outcomeFile);
  }
  // Another test file is starting it: its outcome appears once the script has finished, which is
  // bounded by the script's own time limit.
  for (let waited = 0; ; waited += 100) {
    let text: string | undefined;
    try {
      text = readFileSync(outcomeFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text !== undefined) {
      const outcome = JSON.parse(text) as SharedOutcome;
      if (outcome.url) return outcome.url;
      throw new PostgresUnavailable(outcome.unavailable ?? 'unknown');
    }
    if (waited > 240_000)
      throw new PostgresUnavailable('another test file did not finish starting the server');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
