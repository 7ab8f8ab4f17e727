import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

/**
 * Throwaway PostgreSQL servers through scripts/test-postgres.sh, the one way .ci/run, the tests
 * and the bench start them. No vitest in here: the bench uses it too (bundled, it finds the
 * script through AXE_REPO, which bench/run.mjs sets).
 */
const REPO = process.env.AXE_REPO ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const SCRIPT = path.join(REPO, 'scripts', 'test-postgres.sh');

/** An initdb, a start and a stop each take about a second; a loaded machine may take far longer. */
const SCRIPT_TIMEOUT_MS = 180_000;

/** Why no server could be started: the script's own one-line reason. */
export class PostgresUnavailable extends Error {}

function script(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [SCRIPT, ...args], { timeout: SCRIPT_TIMEOUT_MS }, (error, stdout, stderr) => {
      if (!error) return resolve(stdout.trim());
      const why = stderr.trim().split('\n').pop() || error.message;
      reject(new PostgresUnavailable(why.replace(/^cannot start PostgreSQL: /, '')));
    });
  });
}

/**
 * Starts the server of `dir` (created with its data on the first start) on `port`, or on a free
 * port when none is given, and returns its superuser URL once a connection succeeds.
 */
export async function startPostgresIn(dir: string, port?: number): Promise<string> {
  const url = await script(['start', dir, ...(port === undefined ? [] : [String(port)])]);
  await untilConnects(url);
  return url;
}

/** Stops the server of `dir` (fast shutdown: sessions are ended, the data is kept). */
export async function stopPostgresIn(dir: string): Promise<void> {
  await script(['stop', dir]);
}

/** The port of a postgres:// URL. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}

/**
 * pg_ctl has already waited for the server to accept connections; a query proves it, with a few
 * tries for a server that is still finishing its start on a loaded machine.
 */
async function untilConnects(url: string): Promise<void> {
  let last: unknown;
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await query(url, 'SELECT 1');
      return;
    } catch (error) {
      last = error;
      await new Promise((resolve) => setTimeout(resolve, 100 + attempt * 20));
    }
  }
  throw new PostgresUnavailable(`the server started but takes no connection: ${(last as Error).message}`);
}

/** One statement on a connection of its own. */
export async function query(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
  // A server stopped under an idle client makes it emit 'error': the caller sees the query's error.
  client.on('error', () => {});
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the server of `url`. */
export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}
