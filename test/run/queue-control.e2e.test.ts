import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, type TestContext } from 'vitest';
import type { ResultLine } from '../../internal/batch/result-line.js';
import { openQueue, type QueueDb } from '../../internal/queue/db.js';
import { jobId } from '../../internal/queue/protocol.js';
import { insertResult, stopBatch } from '../../internal/queue/store.js';
import { parseQueueUrl } from '../../internal/queue/url.js';
import { startPrivatePostgres, testDatabase } from '../pg/index.js';
import { skipBecause } from '../skip.js';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe, startAxe, waitFor } from './cli.js';
import { comparable } from './queue.js';

/**
 * `axe run --map --queue`, `--wait` and `axe batches … --queue` against a real PostgreSQL. Items are
 * completed here as a worker completes them (the result written with the job's end), so that what
 * `--wait` and `show --results` print can be held against a local `--map` run's lines.
 */
const setup = e2eHomes();
/** A password that must appear in nothing axe prints. */
const PASSWORD = 'pw-9f3c1d2e7b';
let unavailable: string | undefined;
let url = '';
let db: QueueDb | undefined;

beforeAll(async () => {
  const database = await testDatabase('queue_control');
  if (typeof database === 'string') {
    unavailable = database;
    return;
  }
  // The server trusts loopback: the password is not checked, only carried, as a real one would be.
  url = database.url.replace('postgres://postgres@', `postgres://postgres:${PASSWORD}@`);
  db = await openQueue(parseQueueUrl(url, '--queue'));
}, 120_000);

afterAll(async () => {
  await db?.close();
});

function queue(context: TestContext): QueueDb {
  if (unavailable !== undefined || db === undefined)
    return skipBecause(context, unavailable ?? 'no database');
  return db;
}

async function seed() {
  const { home, fake } = await setup();
  home.agent('labeler', agentToml('labeler'));
  fake.respond((request) => ({ text: `A:${request.lastUserText.toUpperCase()}` }));
  const axe = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    runAxe(args, { env: { ...home.env(fake.url), ...env }, cwd: home.root });
  const map = (args: string[], env: NodeJS.ProcessEnv = {}) =>
    axe(['run', 'labeler', '--agents-dir', home.agentsDir, ...args], env);
  return { home, fake, axe, map };
}

function expectNoPassword(...outputs: { stdout: string; stderr: string }[]): void {
  for (const output of outputs) {
    expect(output.stdout).not.toContain(PASSWORD);
    expect(output.stderr).not.toContain(PASSWORD);
  }
}

function queuedId(stderr: string): string {
  const id = /^axe: batch (\S+): \d+ items queued$/m.exec(stderr)?.[1];
  if (id === undefined) throw new Error(`no batch id in: ${stderr}`);
  return id;
}

/** Completes item `idx` as a worker does: its result and the item's end in one transaction. */
async function complete(q: QueueDb, id: string, idx: number, line: ResultLine): Promise<void> {
  await q.tx((tx) => insertResult(tx, id, idx, line, 'test-worker'));
}

describe.concurrent('axe run --map --queue', () => {
  it('stores the batch, its items and their jobs; an unreadable item has its error result at once; exit 0, stdout clean', async (context) => {
    const q = queue(context);
    const { home, fake, map } = await seed();
    home.file('items.jsonl', '{"message":"one"}\nnot json\n{"message":"three"}\n');
    const result = await map([
      '--map',
      'items.jsonl',
      '--queue',
      url,
      '--retries',
      '2',
      '--max-failures',
      '5',
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    const id = queuedId(result.stderr);
    expect(result.stderr).toBe(`axe: batch ${id}: 3 items queued\n`);
    expect(fake.requests).toHaveLength(0);
    const [batch] = await q.query<{
      items: number;
      retries: number;
      max_failures: number;
      state: string;
      request: Record<string, unknown>;
      protocol: number;
      done: number;
    }>('SELECT items, retries, max_failures, state, request, protocol, done FROM axe.batches WHERE id = $1', [
      id,
    ]);
    expect(batch).toMatchObject({
      items: 3,
      retries: 2,
      max_failures: 5,
      state: 'running',
      protocol: 1,
      done: 1,
    });
    // The request holds no environment, hence no key.
    expect(JSON.stringify(batch?.request)).not.toContain('sk-');
    expect(batch?.request).toMatchObject({ timeoutSeconds: 120, outFormat: 'jsonl', recordRuns: true });
    const items = await q.query<{ idx: number; key: string; state: string }>(
      'SELECT idx, key, state FROM axe.items WHERE batch_id = $1 ORDER BY idx',
      [id],
    );
    expect(items).toEqual([
      { idx: 0, key: '1', state: 'queued' },
      { idx: 1, key: '2', state: 'done' },
      { idx: 2, key: '3', state: 'queued' },
    ]);
    const jobs = await q.query<{ n: string }>(`SELECT count(*) AS n FROM axe_boss.job WHERE name = $1`, [
      `axe-batch-${id}`,
    ]);
    expect(Number(jobs[0]?.n)).toBe(2);
    const [error] = await q.query<{ result: string }>('SELECT result FROM axe.results WHERE batch_id = $1', [
      id,
    ]);
    expect(JSON.parse(error?.result ?? '{}')).toMatchObject({
      key: '2',
      line: 2,
      status: 'error',
      error: 'line 2: not valid JSON',
    });
    const blobs = await q.query<{ n: string }>('SELECT count(*) AS n FROM axe.blobs');
    expect(Number(blobs[0]?.n)).toBeGreaterThan(0);
  });

  it('one transaction: a refusal late in the input (a duplicate key) leaves nothing behind, exit 2', async (context) => {
    // A database of its own: nothing else is queued there while the refusal is checked.
    const database = await testDatabase('queue_refused');
    if (typeof database === 'string') return skipBecause(context, database);
    const { home, map } = await seed();
    const many = Array.from({ length: 2500 }, (_, n) => JSON.stringify({ id: `k${n}`, message: `m${n}` }));
    home.file('dup.jsonl', [...many, '{"id":"k7","message":"again"}'].join('\n'));
    const result = await map(['--map', 'dup.jsonl', '--key', 'id', '--queue', database.url]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'axe: --key id: the key "k7" is on line 8 and on line 2501: keys must be unique\n',
    );
    expect(result.stdout).toBe('');
    // An --out that cannot be written refuses the batch before it is stored.
    const badOut = await map([
      '--map',
      'dup.jsonl',
      '--queue',
      database.url,
      '--wait',
      '--out',
      'no/such/dir/out.jsonl',
    ]);
    expect(badOut.code).toBe(2);
    expect(badOut.stderr).toMatch(/^axe: --out: cannot write .*out\.jsonl/);
    expect(badOut.stderr).not.toMatch(/items queued/);
    // Its first 2,500 items were written (in chunks), its tree and its queue made, before the
    // duplicate was read: none of it may be left.
    const own = await openQueue(parseQueueUrl(database.url, '--queue'));
    try {
      const [left] = await own.query<Record<string, string>>(
        `SELECT (SELECT count(*) FROM axe.batches) AS batches, (SELECT count(*) FROM axe.items) AS items,
                (SELECT count(*) FROM axe.blobs) AS blobs, (SELECT count(*) FROM axe_boss.queue) AS queues,
                (SELECT count(*) FROM axe_boss.job) AS jobs`,
      );
      expect(left).toEqual({ batches: '0', items: '0', blobs: '0', queues: '0', jobs: '0' });
    } finally {
      await own.close();
    }
  });

  it('--map -: the items of stdin are stored (with -p before each), nothing of stdin is left on disk', async (context) => {
    const q = queue(context);
    const { home, fake } = await setup();
    home.agent('labeler', agentToml('labeler'));
    const result = await runAxe(
      [
        'run',
        'labeler',
        '--agents-dir',
        home.agentsDir,
        '--map',
        '-',
        '--map-format',
        'lines',
        '-p',
        'Label:',
        '--queue',
        url,
      ],
      { env: { ...home.env(fake.url), TMPDIR: home.root }, cwd: home.root, stdin: 'alpha\n\nbeta\n' },
    );
    expect(result.code, result.stderr).toBe(0);
    const id = queuedId(result.stderr);
    const items = await q.query<{ key: string; message: string }>(
      `SELECT key, item->>'message' AS message FROM axe.items WHERE batch_id = $1 ORDER BY idx`,
      [id],
    );
    expect(items).toEqual([
      { key: '1', message: 'Label:\n\nalpha' },
      { key: '3', message: 'Label:\n\nbeta' },
    ]);
    const [batch] = await q.query<{ input: string }>(
      `SELECT request->'input'->>'file' AS input FROM axe.batches WHERE id = $1`,
      [id],
    );
    expect(batch?.input).toBe('stdin');
    expect(readdirSync(home.root).filter((name) => name.startsWith('axe-map-'))).toEqual([]);
  });

  it('refuses what has no meaning on workers, and --wait/--retries without a queue (exit 2, one line)', async () => {
    const { home, map } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n');
    const cases: [string[], string][] = [
      [['--concurrency', '3'], '--concurrency cannot be used with --queue'],
      [['--record', 'c.jsonl'], '--record cannot be used with --queue'],
      [['--events', '-'], '--events cannot be used with --queue'],
      [['--progress', 'always'], '--progress cannot be used with --queue'],
      [['--out', 'o.jsonl'], '--out needs --wait with --queue'],
    ];
    for (const [flags, message] of cases) {
      const result = await map(['--map', 'items.jsonl', '--queue', 'postgres://u@127.0.0.1:1/x', ...flags]);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toMatch(new RegExp(`^axe: ${message.replace(/[-]/g, '\\-')}`));
      expect(lines(result.stderr)).toHaveLength(1);
    }
    for (const flag of [['--wait'], ['--retries', '1']]) {
      const result = await map(['--map', 'items.jsonl', ...flag]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(`axe: ${flag[0]} needs --queue (or AXE_QUEUE)\n`);
    }
  });

  it('a bad URL: exit 2 naming --queue or AXE_QUEUE; unreachable: exit 3 naming host:port; never the password', async () => {
    const { home, map, axe } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n');
    const bad = await map(['--map', 'items.jsonl', '--queue', `mysql://u:${PASSWORD}@h/db`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      'axe: --queue: expected a postgres:// or postgresql:// URL, got a mysql:// one\n',
    );
    const badEnv = await axe(['batches', 'list'], { AXE_QUEUE: `u:${PASSWORD}@nowhere` });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toMatch(/^axe: AXE_QUEUE: expected a postgres/);
    const away = `postgres://u:${PASSWORD}@127.0.0.1:1/db`;
    const unreachable = await map(['--map', 'items.jsonl', '--queue', away]);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toBe(
      'axe: cannot reach PostgreSQL at 127.0.0.1:1 (connect ECONNREFUSED 127.0.0.1:1)\n',
    );
    const control = await axe(['batches', 'show', 'last', '--queue', away]);
    expect(control.code).toBe(3);
    expect(control.stdout).toBe('');
    expectNoPassword(bad, badEnv, unreachable, control);
  });

  it('a database that is not there (exit 3) and a batch that is not there (exit 2): never the password', async (context) => {
    queue(context);
    const { axe } = await seed();
    const noDatabase = await axe([
      'batches',
      'list',
      '--queue',
      `${url.replace(/\/[^/?]*$/, '/no_such_db')}`,
    ]);
    expect(noDatabase.code).toBe(3);
    expect(noDatabase.stderr).toMatch(
      /^axe: cannot use PostgreSQL at 127\.0\.0\.1:\d+ \(.*"no_such_db" does not exist\)\n$/,
    );
    const noBatch = await axe(['batches', 'show', 'nope', '--queue', url]);
    expect(noBatch.code).toBe(2);
    expect(noBatch.stderr).toBe('axe: no batch matches "nope" (see axe batches list)\n');
    const inQuery = await axe(['batches', 'show', 'nope'], { AXE_QUEUE: `${url}?password=${PASSWORD}` });
    expect(inQuery.code).toBe(2);
    expectNoPassword(noDatabase, noBatch, inQuery);
  });
});

describe.concurrent('--wait', () => {
  it('prints the lines in input order exactly as a local --map run does, with its last line and exit code', async (context) => {
    const q = queue(context);
    const { home, map } = await seed();
    home.file('items.jsonl', '{"message":"one"}\nnot json\n{"message":"three"}\n{"message":"four"}\n');
    const local = await map(['--map', 'items.jsonl']);
    expect(local.code).toBe(1);
    const localLines = lines(local.stdout);
    const waiting = startAxe(
      ['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'items.jsonl', '--wait'],
      { env: { ...home.env('http://127.0.0.1:1'), AXE_QUEUE: url }, cwd: home.root },
    );
    await waitFor(() => /items queued/.test(waiting.stderrSoFar()), 60_000);
    const id = queuedId(waiting.stderrSoFar());
    // Completed out of order, as workers do: the lines still come in input order.
    for (const idx of [3, 2, 0]) {
      await complete(q, id, idx, JSON.parse(localLines[idx] ?? '') as ResultLine);
    }
    const result = await waiting.done;
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toBe(local.stdout);
    expect(lines(result.stderr).at(-1)).toBe(
      `axe: batch ${id}: 3 completed, 1 failed (see axe batches show ${id})`,
    );
    expectNoPassword(result);
  });

  it('--out-format csv --out FILE: the same file as a local run writes', async (context) => {
    const q = queue(context);
    const { home, map } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n{"message":"two"}\n');
    const local = await map(['--map', 'items.jsonl']);
    const localCsv = await map(['--map', 'items.jsonl', '--out-format', 'csv', '--out', 'local.csv']);
    expect(localCsv.code).toBe(0);
    const waiting = startAxe(
      [
        'run',
        'labeler',
        '--agents-dir',
        home.agentsDir,
        '--map',
        'items.jsonl',
        '--queue',
        url,
        '--wait',
        '--out-format',
        'csv',
        '--out',
        'queued.csv',
      ],
      { env: home.env('http://127.0.0.1:1'), cwd: home.root },
    );
    await waitFor(() => /items queued/.test(waiting.stderrSoFar()), 60_000);
    const id = queuedId(waiting.stderrSoFar());
    // The CSV's lines are those of the JSONL run's results: written from them, they must match the local CSV.
    const [first, second] = lines(local.stdout).map((line) => JSON.parse(line) as ResultLine);
    const localCsvLines = readFileSync(path.join(home.root, 'local.csv'), 'utf8');
    await complete(q, id, 0, {
      ...(first as ResultLine),
      run_id: csvField(localCsvLines, 1, 8),
      duration_ms: Number(csvField(localCsvLines, 1, 9)),
    });
    await complete(q, id, 1, {
      ...(second as ResultLine),
      run_id: csvField(localCsvLines, 2, 8),
      duration_ms: Number(csvField(localCsvLines, 2, 9)),
    });
    const result = await waiting.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(readFileSync(path.join(home.root, 'queued.csv'), 'utf8')).toBe(localCsvLines);
    expect(lines(result.stderr).at(-1)).toBe(`axe: batch ${id}: 2 completed, 0 failed`);
  });

  it('a cap that stops the batch: exit 4 naming it; a cancel: exit 1, the rest cancelled', async (context) => {
    const q = queue(context);
    const { home } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n{"message":"two"}\n');
    const env = { ...home.env('http://127.0.0.1:1'), AXE_QUEUE: url };
    const run = () =>
      startAxe(['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'items.jsonl', '--wait'], {
        env,
        cwd: home.root,
      });
    const capped = run();
    await waitFor(() => /items queued/.test(capped.stderrSoFar()), 60_000);
    const cappedId = queuedId(capped.stderrSoFar());
    await q.tx((tx) => stopBatch(tx, cappedId, '--max-cost'));
    const stopped = await capped.done;
    expect(stopped.code).toBe(4);
    expect(lines(stopped.stdout).map((line) => (JSON.parse(line) as ResultLine).status)).toEqual([
      'skipped',
      'skipped',
    ]);
    expect(lines(stopped.stderr).at(-1)).toBe(
      `axe: batch ${cappedId}: stopped by --max-cost: 0 completed, 0 failed, 2 skipped (axe batches resume ${cappedId})`,
    );
    const cancelled = run();
    await waitFor(() => /items queued/.test(cancelled.stderrSoFar()), 60_000);
    const cancelledId = queuedId(cancelled.stderrSoFar());
    const cancel = await runAxe(['batches', 'cancel', cancelledId], { env, cwd: home.root });
    expect(cancel.code).toBe(0);
    expect(cancel.stderr).toBe(
      `axe: batch ${cancelledId}: cancelled (its running items end on their workers)\n`,
    );
    const ended = await cancelled.done;
    expect(ended.code).toBe(1);
    expect(lines(ended.stderr).at(-1)).toBe(
      `axe: batch ${cancelledId}: cancelled: 0 completed, 0 failed, 2 skipped`,
    );
  });

  it('Ctrl-C stops the waiting only: exit 130, the batch goes on', async (context) => {
    const q = queue(context);
    const { home } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n');
    const waiting = startAxe(
      ['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'items.jsonl', '--queue', url, '--wait'],
      { env: home.env('http://127.0.0.1:1'), cwd: home.root },
    );
    await waitFor(() => /items queued/.test(waiting.stderrSoFar()), 60_000);
    const id = queuedId(waiting.stderrSoFar());
    waiting.kill('SIGINT');
    const result = await waiting.done;
    expect(result.code).toBe(130);
    expect(lines(result.stderr).at(-1)).toMatch(
      new RegExp(
        `^axe: batch ${id}: still running on the workers \\(axe batches show ${id} --queue postgres://postgres:\\*\\*\\*@`,
      ),
    );
    expectNoPassword(result);
    const [batch] = await q.query<{ state: string }>('SELECT state FROM axe.batches WHERE id = $1', [id]);
    expect(batch?.state).toBe('running');
  });
});

describe('--wait with a real worker', () => {
  it('failed and unreadable items, --system: the lines, last line and exit code of a local --map run', {
    timeout: 300_000,
  }, async (context) => {
    const database = await testDatabase('queue_wait_worker');
    if (typeof database === 'string') return skipBecause(context, database);
    const { home, fake, axe, map } = await seed();
    home.agent('labeler', `${agentToml('labeler')}[input.count]\ntype = "integer"\n`);
    home.file('items.jsonl', '{"count":1}\n{"count":"x"}\nnot json\n{"count":4}\n');
    const local = await map(['--map', 'items.jsonl', '--system', 'ROLE:custom']);
    expect(local.code).toBe(1);
    const waiting = startAxe(
      [
        'run',
        'labeler',
        '--agents-dir',
        home.agentsDir,
        '--map',
        'items.jsonl',
        '--system',
        'ROLE:custom',
        '--queue',
        database.url,
        '--wait',
      ],
      { env: home.env('http://127.0.0.1:1'), cwd: home.root },
    );
    await waitFor(() => /items queued/.test(waiting.stderrSoFar()), 60_000);
    const id = queuedId(waiting.stderrSoFar());
    fake.reset();
    fake.respond((request) => ({ text: `A:${request.lastUserText.toUpperCase()}` }));
    const worker = await axe(['worker', '--queue', database.url, '--exit-when-idle']);
    expect(worker.code, worker.stderr).toBe(0);
    // --system went with the batch: the worker's runs send it instead of the agent's prompt.
    expect(fake.requests.map((request) => request.system)).toEqual(['ROLE:custom', 'ROLE:custom']);
    const result = await waiting.done;
    expect(result.code, result.stderr).toBe(1);
    const localId = /^axe: batch (\S+): /.exec(local.stderr)?.[1] ?? '';
    expect(comparable(result.stdout)).toEqual(comparable(local.stdout));
    // The same line, its command naming the queue the batch is on.
    expect(lines(result.stderr).at(-1)).toBe(
      lines(local.stderr).at(-1)?.replaceAll(localId, id).replace(/\)$/, ` --queue ${database.url})`),
    );
  });
});

describe('--wait through a restart', () => {
  it('PostgreSQL stopped and started while waiting: --wait carries on and prints every line once', async (context) => {
    const server = await startPrivatePostgres();
    if (typeof server === 'string') return skipBecause(context, server);
    const own = await server.database('queue_restart');
    const { home, map } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n{"message":"two"}\n');
    const local = lines((await map(['--map', 'items.jsonl'])).stdout);
    const waiting = startAxe(
      ['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'items.jsonl', '--queue', own, '--wait'],
      { env: home.env('http://127.0.0.1:1'), cwd: home.root },
    );
    await waitFor(() => /items queued/.test(waiting.stderrSoFar()), 60_000);
    const id = queuedId(waiting.stderrSoFar());
    const before = await openQueue(parseQueueUrl(own, '--queue'));
    try {
      await complete(before, id, 0, JSON.parse(local[0] ?? '') as ResultLine);
      // The first line is out before the server goes: --wait was connected, and must reconnect.
      await waitFor(() => lines(waiting.stdoutSoFar()).length === 1, 60_000);
    } finally {
      await before.close();
    }
    await server.stop();
    // --wait has found it gone, and waits for it.
    await waitFor(() => /is away/.test(waiting.stderrSoFar()), 60_000);
    await server.start();
    const after = await openQueue(parseQueueUrl(own, '--queue'));
    try {
      await complete(after, id, 1, JSON.parse(local[1] ?? '') as ResultLine);
    } finally {
      await after.close();
    }
    const result = await waiting.done;
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout)).toEqual(local);
    expect(lines(result.stderr)).toEqual([
      `axe: batch ${id}: 2 items queued`,
      expect.stringMatching(
        new RegExp(
          `^axe: batch ${id}: PostgreSQL at 127.0.0.1:${server.port} is away \\(.*\\): waiting for it$`,
        ),
      ),
      `axe: batch ${id}: 2 completed, 0 failed`,
    ]);
  }, 120_000);
});

describe.concurrent('axe batches --queue', () => {
  it('list, show, show --json, show --results, cancel, resume, resume --retry-failed, rm', async (context) => {
    const q = queue(context);
    const { home, map, axe } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n{"message":"two"}\n{"message":"three"}\n');
    const queued = await map(['--map', 'items.jsonl', '--queue', url]);
    const id = queuedId(queued.stderr);
    const local = lines((await map(['--map', 'items.jsonl'])).stdout).map(
      (line) => JSON.parse(line) as ResultLine,
    );
    await complete(q, id, 0, local[0] as ResultLine);
    await complete(q, id, 1, { ...(local[1] as ResultLine), status: 'error', answer: null, error: 'boom' });
    const batches = (args: string[]) => axe(['batches', ...args, '--queue', url]);

    const list = await batches(['list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(
      `${id}  labeler  2/3 done, 1 failed  running  ${path.join(home.root, 'items.jsonl')}`,
    );
    const show = await batches(['show', id.slice(0, 24)]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(
      new RegExp(`^batch ${id}: labeler over .*items.jsonl \\(3 items\\), started `),
    );
    expect(show.stdout).toContain('  1 completed, 1 error, 1 pending\n');
    expect(show.stdout).toContain('  line 2 (key 2): error: boom\n');
    expect(show.stdout).toContain(
      '  state: running; 0 workers running its items (0 in all); 0 duplicates discarded\n',
    );
    const json = JSON.parse((await batches(['show', id, '--json'])).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      id,
      items: 3,
      state: 'running',
      duplicates: 0,
      counts: { completed: 1, error: 1, pending: 1 },
    });
    const results = await batches(['show', id, '--results']);
    expect(lines(results.stdout).map((line) => (JSON.parse(line) as ResultLine).status)).toEqual([
      'completed',
      'error',
    ]);

    const rmRunning = await batches(['rm', id]);
    expect(rmRunning.code).toBe(2);
    expect(rmRunning.stderr).toBe(
      `axe: batch ${id} is running on the workers: cancel it first (axe batches cancel ${id})\n`,
    );

    expect((await batches(['cancel', id])).code).toBe(0);
    const cancelledResults = lines((await batches(['show', id, '--results'])).stdout);
    expect(cancelledResults.map((line) => (JSON.parse(line) as ResultLine).status)).toEqual([
      'completed',
      'error',
      'cancelled',
    ]);
    const again = await batches(['cancel', id]);
    expect(again.stderr).toBe(`axe: batch ${id}: already cancelled\n`);

    const resumed = await batches(['resume', id]);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toBe(`axe: batch ${id}: 1 of 3 items queued again\n`);
    // The item goes back under a new job (a new generation), beside its old, cancelled one.
    const jobs = await q.query<{ id: string; state: string }>(
      'SELECT id, state FROM axe_boss.job WHERE name = $1 AND data @> $2::jsonb ORDER BY created_on',
      [`axe-batch-${id}`, JSON.stringify({ idx: 2 })],
    );
    expect(jobs).toEqual([
      { id: jobId(id, 2, 0), state: 'cancelled' },
      { id: jobId(id, 2, 1), state: 'created' },
    ]);
    const retried = await batches(['resume', id, '--retry-failed']);
    expect(retried.stderr).toBe(`axe: batch ${id}: 1 of 3 items queued again\n`);
    const items = await q.query<{ idx: number; state: string; generation: number }>(
      'SELECT idx, state, generation FROM axe.items WHERE batch_id = $1 ORDER BY idx',
      [id],
    );
    expect(items).toEqual([
      { idx: 0, state: 'done', generation: 0 },
      { idx: 1, state: 'queued', generation: 1 },
      { idx: 2, state: 'queued', generation: 1 },
    ]);
    await complete(q, id, 1, local[1] as ResultLine);
    await complete(q, id, 2, local[2] as ResultLine);
    const done = await batches(['show', id, '--results']);
    expect(done.stdout).toBe(local.map((line) => `${JSON.stringify(line)}\n`).join(''));
    // A resume with nothing to run again leaves the batch done, not running with nothing queued.
    const nothing = await batches(['resume', id]);
    expect(nothing.stderr).toBe(`axe: batch ${id}: 0 of 3 items queued again\n`);
    const [state] = await q.query<{ state: string }>('SELECT state FROM axe.batches WHERE id = $1', [id]);
    expect(state?.state).toBe('done');

    const removed = await batches(['rm', id]);
    expect(removed.code, removed.stderr).toBe(0);
    const gone = await q.query('SELECT 1 FROM axe.batches WHERE id = $1', [id]);
    expect(gone).toHaveLength(0);
    const noQueue = await q.query('SELECT 1 FROM axe_boss.queue WHERE name = $1', [`axe-batch-${id}`]);
    expect(noQueue).toHaveLength(0);
    const missing = await batches(['show', id]);
    expect(missing.code).toBe(2);
    expectNoPassword(list, show, results, rmRunning, resumed, missing);
  });
});

/** Field `column` (0-based) of CSV row `row` (0 is the header): the fields compared hold no commas. */
function csvField(csv: string, row: number, column: number): string {
  return (csv.split('\n')[row] ?? '').split(',').at(column - 10) ?? '';
}
