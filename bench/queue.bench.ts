// Batches on PostgreSQL (`axe run --map --queue`, `axe worker`), against the local fake server and
// a throwaway PostgreSQL 15 server of the bench's own (scripts/test-postgres.sh, as the tests start
// theirs: fsync off, so these are the queue's figures, not a disk's):
// - throughput: items per second with 1, 2 and 4 workers, `--concurrency 8` each, every answer
//   after 200 ms: 8 × 25 items per worker (25 rounds of 200 ms, 5 s at best whatever the number of
//   workers), timed from the batch being queued (the workers already wait) to its last result
//   stored; against the ideal of 40 items a second per worker, and the scaling against 1 worker;
// - the queue's own cost per item: 1,000 items answered at once through 1 worker at
//   `--concurrency 8`, against a local `--map` run of the same items at the same concurrency
//   (its process start-up taken out: a batch of one item), the difference per item.
// Item run records are off (`--no-record-run`) in both: this is the queue's cost, not a record's.
// Medians of 3 runs. Without PostgreSQL binaries the bench says why and measures nothing.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';
import {
  PostgresUnavailable,
  query,
  startPostgresIn,
  stopPostgresIn,
  withDatabase,
} from '../test/pg/server.js';

const repo = process.env.AXE_REPO ?? process.cwd();
const cli = join(repo, 'dist', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'axe-bench-queue-'));
const agentsDir = join(home, 'agents');
mkdirSync(agentsDir);
writeFileSync(join(agentsDir, 'labeler.toml'), 'name = "labeler"\nmodel = "anthropic/claude-sonnet-4-5"\n');
const pgDir = mkdtempSync(join(tmpdir(), 'axe-bench-pg-'));

let latencyMs = 0;
const fake = await startFakeLlm({ respond: () => ({ text: 'label', delayMs: latencyMs }) });
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH ?? '',
  HOME: home,
  XDG_CONFIG_HOME: join(home, 'config'),
  XDG_DATA_HOME: join(home, 'data'),
  XDG_CACHE_HOME: join(home, 'cache'),
  AXE_ANTHROPIC_BASE_URL: fake.url,
  ANTHROPIC_API_KEY: 'bench-key',
};
const RUNS = 3;

function itemsFile(count: number): string {
  const file = join(home, `items-${count}.jsonl`);
  const lines: string[] = [];
  for (let i = 0; i < count; i++)
    lines.push(JSON.stringify({ id: `t-${i}`, message: `ticket ${i}: it broke` }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function axe(args: string[]): Promise<{ ms: number; stderr: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      [cli, ...args],
      { env, cwd: home, maxBuffer: 1 << 30 },
      (error, _stdout, stderr) => {
        if (error) return reject(new Error(`axe ${args.slice(0, 2).join(' ')}: ${stderr || error.message}`));
        resolve({ ms: performance.now() - started, stderr });
      },
    ),
  );
}

let databases = 0;
async function freshQueue(server: string): Promise<string> {
  const name = `bench_${++databases}`;
  await query(server, `CREATE DATABASE ${name}`);
  return withDatabase(server, name);
}

/** `workers` workers waiting on a fresh queue, then `count` items queued: ms from queued to the last result stored. */
async function throughQueue(server: string, workers: number, count: number): Promise<number> {
  const url = await freshQueue(server);
  const running = Array.from({ length: workers }, () =>
    spawn(process.execPath, [cli, 'worker', '--queue', url, '--concurrency', '8'], {
      env,
      cwd: home,
      stdio: ['ignore', 'ignore', 'ignore'],
    }),
  );
  try {
    // Timed from the batch being queued: the workers' own start (tables, pg-boss) is not the queue's cost.
    await untilRegistered(url, running);
    const args = ['run', 'labeler', '--agents-dir', agentsDir, '--map', itemsFile(count), '--key', 'id'];
    const queued = await axe([...args, '--no-record-run', '--queue', url]);
    const id = /axe: batch (\S+): \d+ items queued/.exec(queued.stderr)?.[1];
    if (!id) throw new Error(`no batch queued: ${queued.stderr}`);
    const started = performance.now();
    for (;;) {
      const { rows } = await query(url, 'SELECT done FROM axe.batches WHERE id = $1', [id]);
      if (rows[0]?.done === count) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    for (const worker of running) worker.kill('SIGTERM');
    await Promise.all(running.map((worker) => new Promise((resolve) => worker.once('exit', resolve))));
  }
}

/** Until every worker has registered on the queue (its tables may not be there yet); one that ends fails the bench. */
async function untilRegistered(url: string, workers: ChildProcess[]): Promise<void> {
  const count = workers.length;
  for (;;) {
    if (workers.some((worker) => worker.exitCode !== null))
      throw new Error('a worker ended before it registered');
    const registered = await query(url, 'SELECT count(*)::int AS n FROM axe.workers').then(
      ({ rows }) => rows[0]?.n as number,
      () => 0,
    );
    if (registered >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function local(count: number): Promise<number> {
  const args = ['run', 'labeler', '--agents-dir', agentsDir, '--map', itemsFile(count), '--key', 'id'];
  return (await axe([...args, '--no-record-run', '--concurrency', '8', '--progress', 'never'])).ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

let server: string | undefined;
try {
  try {
    server = await startPostgresIn(pgDir);
  } catch (error) {
    if (!(error instanceof PostgresUnavailable)) throw error;
    process.stdout.write(`\nnot measured: no PostgreSQL (${error.message})\n`);
  }
  if (server) {
    const rows: string[][] = [];
    latencyMs = 200;
    let single = 0;
    for (const workers of [1, 2, 4]) {
      const count = 8 * 25 * workers;
      const times: number[] = [];
      for (let run = 0; run < RUNS; run++) times.push(await throughQueue(server, workers, count));
      const rate = count / (median(times) / 1000);
      if (workers === 1) single = rate;
      const ideal = 40 * workers;
      rows.push([
        `${workers} worker${workers === 1 ? '' : 's'} × --concurrency 8, ${count} items × 200 ms`,
        `${rate.toFixed(1)} items/s`,
        `ideal ${ideal}/s: ${(rate / ideal).toFixed(3)}×; vs 1 worker: ${(rate / single / workers).toFixed(3)}× linear`,
        '>= 0.9x linear',
      ]);
    }
    latencyMs = 0;
    const count = 1000;
    const queueTimes: number[] = [];
    const localTimes: number[] = [];
    const startups: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      queueTimes.push(await throughQueue(server, 1, count));
      localTimes.push(await local(count));
      startups.push(await local(1));
    }
    const queueMs = median(queueTimes);
    const localMs = median(localTimes) - median(startups);
    rows.push([
      `queue overhead per item (1,000 items answered at once, 1 worker, --concurrency 8)`,
      `${((queueMs - localMs) / count).toFixed(2)} ms`,
      `queue ${(queueMs / 1000).toFixed(2)} s vs local --map ${(localMs / 1000).toFixed(2)} s (start-up out)`,
      '<= 10 ms',
    ]);
    process.stdout.write('\n| row | measured | against | target |\n|---|---|---|---|\n');
    for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  }
} finally {
  await fake.close();
  await stopPostgresIn(pgDir).catch(() => {});
  rmSync(pgDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
