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
// Beside the throughput: the model calls in flight on average (8 per worker at best; fewer means
// slots waiting on the queue between items), and the workers' CPU per item and their share of one
// core: on a small machine the workers, PostgreSQL and the fake server share the cores, and a
// scaling short of linear is the machine's limit when their shares near the cores' count.
// Medians of 3 runs. Without PostgreSQL binaries the bench says why and measures nothing.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';
import {
  PostgresUnavailable,
  query,
  startPostgresIn,
  stopPostgresIn,
  withDatabase,
} from '../test/pg/server.js';
import { benchEnv } from './home.js';

const repo = process.env.AXE_REPO ?? process.cwd();
const cli = join(repo, 'dist', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'axe-bench-queue-'));
const agentsDir = join(home, 'agents');
mkdirSync(agentsDir);
writeFileSync(join(agentsDir, 'labeler.toml'), 'name = "labeler"\nmodel = "anthropic/claude-sonnet-4-5"\n');
const pgDir = mkdtempSync(join(tmpdir(), 'axe-bench-pg-'));
// Each worker writes its CPU time at exit: how much of the machine the workers took.
const usageDir = join(home, 'usage');
mkdirSync(usageDir);
const preload = join(home, 'usage.cjs');
writeFileSync(
  preload,
  `process.on('exit', () => require('node:fs').writeFileSync(require('node:path').join(process.env.USAGE_DIR, process.pid + '.json'), JSON.stringify(process.resourceUsage())));\n`,
);

let latencyMs = 0;
const fake = await startFakeLlm({ respond: () => ({ text: 'label', delayMs: latencyMs }) });
const env = benchEnv(home, fake.url, { USAGE_DIR: usageDir });
const RUNS = 3;
const devNull = openSync('/dev/null', 'w');
const loadBefore = loadavg()[0]?.toFixed(1);

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

interface Through {
  /** From queued to the last result stored. */
  ms: number;
  /** The workers' CPU time (user + system), start to exit. */
  cpuMs: number;
  /** Model calls open at the fake server on average over `ms` (the time it held them, over `ms`). */
  inFlight: number;
}

/** `workers` workers waiting on a fresh queue, then `count` items queued through them. */
async function throughQueue(server: string, workers: number, count: number): Promise<Through> {
  const url = await freshQueue(server);
  fake.reset();
  fake.respond(() => ({ text: 'label', delayMs: latencyMs }));
  const running = Array.from({ length: workers }, () =>
    spawn(process.execPath, ['--require', preload, cli, 'worker', '--queue', url, '--concurrency', '8'], {
      env,
      cwd: home,
      // stdout as a shell's `>/dev/null` (write-only): axe takes a read-write one for a closed stdout.
      stdio: ['ignore', devNull, 'pipe'],
    }),
  );
  // A worker's per-item lines are dropped; its last words are kept, for a worker that fails.
  const said = running.map(() => ({ text: '' }));
  for (const [i, worker] of running.entries()) {
    worker.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      const kept = said[i] as { text: string };
      kept.text = (kept.text + chunk).slice(-2000);
    });
  }
  try {
    // Timed from the batch being queued: the workers' own start (tables, pg-boss) is not the queue's cost.
    await untilRegistered(url, running).catch((error: Error) => {
      throw new Error(`${error.message}: ${said.map((kept) => kept.text).join('\n')}`);
    });
    const args = ['run', 'labeler', '--agents-dir', agentsDir, '--map', itemsFile(count), '--key', 'id'];
    const queued = await axe([...args, '--no-record-run', '--queue', url]);
    const id = /axe: batch (\S+): \d+ items queued/.exec(queued.stderr)?.[1];
    if (!id) throw new Error(`no batch queued: ${queued.stderr}`);
    const started = performance.now();
    for (;;) {
      const { rows } = await query(url, 'SELECT done FROM axe.batches WHERE id = $1', [id]);
      if (rows[0]?.done === count) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const ms = performance.now() - started;
    await stopWorkers(running);
    let cpuMs = 0;
    for (const worker of running) {
      const usage = JSON.parse(
        readFileSync(join(usageDir, `${worker.pid}.json`), 'utf8'),
      ) as NodeJS.ResourceUsage;
      cpuMs += (usage.userCPUTime + usage.systemCPUTime) / 1000;
    }
    const held = fake.requests.reduce((sum, r) => sum + ((r.finishedAt ?? r.receivedAt) - r.receivedAt), 0);
    return { ms, cpuMs, inFlight: held / ms };
  } finally {
    await stopWorkers(running);
  }
}

async function stopWorkers(workers: ChildProcess[]): Promise<void> {
  const ended = workers.map((worker) =>
    worker.exitCode !== null || worker.signalCode !== null
      ? Promise.resolve()
      : new Promise((resolve) => worker.once('exit', resolve)),
  );
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(ended);
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
      const runs: Through[] = [];
      for (let run = 0; run < RUNS; run++) runs.push(await throughQueue(server, workers, count));
      const wall = median(runs.map((r) => r.ms));
      const rate = count / (wall / 1000);
      const cpuPerItem = median(runs.map((r) => r.cpuMs)) / count;
      const inFlight = median(runs.map((r) => r.inFlight));
      if (workers === 1) single = rate;
      const ideal = 40 * workers;
      rows.push([
        `${workers} worker${workers === 1 ? '' : 's'} × --concurrency 8, ${count} items × 200 ms`,
        `${rate.toFixed(1)} items/s; ${inFlight.toFixed(1)} of ${8 * workers} calls in flight on average; workers' CPU ${cpuPerItem.toFixed(1)} ms/item (${((cpuPerItem * rate) / 10).toFixed(0)}% of one core)`,
        `ideal ${ideal}/s: ${(rate / ideal).toFixed(3)}×; vs 1 worker: ${(rate / single / workers).toFixed(3)}× linear`,
        '>= 0.9x linear',
      ]);
    }
    latencyMs = 0;
    const count = 1000;
    const queueTimes: Through[] = [];
    const localTimes: number[] = [];
    const startups: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      queueTimes.push(await throughQueue(server, 1, count));
      localTimes.push(await local(count));
      startups.push(await local(1));
    }
    const queueMs = median(queueTimes.map((r) => r.ms));
    const localMs = median(localTimes) - median(startups);
    rows.push([
      `queue overhead per item (1,000 items answered at once, 1 worker, --concurrency 8)`,
      `${((queueMs - localMs) / count).toFixed(2)} ms`,
      `queue ${(queueMs / 1000).toFixed(2)} s vs local --map ${(localMs / 1000).toFixed(2)} s (start-up out)`,
      '<= 10 ms',
    ]);
    const cores = availableParallelism();
    process.stdout.write(`\n${cores} cores, load average ${loadBefore} before the bench\n`);
    process.stdout.write('\n| row | measured | against | target |\n|---|---|---|---|\n');
    for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
  }
} finally {
  await fake.close();
  await stopPostgresIn(pgDir).catch(() => {});
  rmSync(pgDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
