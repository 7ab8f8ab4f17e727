import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ResultLine } from '../../internal/batch/result-line.js';
import { openQueue } from '../../internal/queue/db.js';
import { stopBatch } from '../../internal/queue/store.js';
import { parseQueueUrl } from '../../internal/queue/url.js';
import { testDatabase } from '../pg/index.js';
import { lines, runAxe } from './cli.js';
import { itemsJsonl, queueScenes, until, workerItems } from './queue.js';

/**
 * `axe worker` end to end, each behaviour on its own small batch: retries, `--max-failures`, a
 * cancel reaching running items, SIGTERM handing items back, a silent worker taken for dead (its
 * late results discarded and counted), the cost cap shared by two workers. The built binary runs
 * the workers and the enqueue; the fake server answers; each test has a database of its own.
 */
const scene = queueScenes();

function results(stdout: string): ResultLine[] {
  return lines(stdout).map((line) => JSON.parse(line) as ResultLine);
}

/** A reply the test lets go of: the request stays unanswered until `release()`. */
function held(): { reply: Promise<void>; release: () => void } {
  let release: () => void = () => {};
  const reply = new Promise<void>((resolve) => {
    release = resolve;
  });
  return { reply, release };
}

describe('axe worker: failed items', () => {
  it('--retries 2: a failed item runs again until it completes; without --retries its failure is its result', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('retries'));
    // "flaky 1" fails twice, then answers; every other item answers at once.
    let flaky = 0;
    fake.respond((request) =>
      request.lastUserText === 'flaky 1' && flaky++ < 2
        ? { fault: { kind: 'status', status: 400, message: 'bad luck' } }
        : { text: `A:${request.lastUserText}` },
    );
    home.file('items.jsonl', itemsJsonl(3, 'flaky'));
    const retried = await enqueue('items.jsonl', ['--key', 'id', '--retries', '2', '--wait']);
    const first = await worker(['--concurrency', '2', '--exit-when-idle']).done;
    expect(first.code, first.stderr).toBe(0);
    const waited = await retried.run.done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(results(waited.stdout).map((l) => [l.key, l.status])).toEqual([
      ['flaky-0', 'completed'],
      ['flaky-1', 'completed'],
      ['flaky-2', 'completed'],
    ]);
    expect(fake.requests.filter((r) => r.lastUserText === 'flaky 1')).toHaveLength(3);
    expect(first.stderr).toContain(`axe worker: ${retried.id} line 2 (key flaky-1): error in`);
    expect(first.stderr).toMatch(/\(key flaky-1\): error in \d+\.\ds \(to run again: retry 1 of 2\)/);
    expect(first.stderr).toMatch(/\(key flaky-1\): error in \d+\.\ds \(to run again: retry 2 of 2\)/);
    expect(
      workerItems(first.stderr, retried.id).filter(([, , status]) => status === 'completed'),
    ).toHaveLength(3);
    expect(
      await sql('SELECT attempts, state FROM axe.items WHERE batch_id = $1 AND key = $2', [
        retried.id,
        'flaky-1',
      ]),
    ).toEqual([{ attempts: 2, state: 'done' }]);
    // The stored tree stays for the next batch of the same agent; the batch's copy of work/ is gone with the batch.
    const workerDir = path.join(home.root, 'cache', 'axe', 'worker');
    expect(readdirSync(path.join(workerDir, 'trees'))).toHaveLength(1);
    expect(existsSync(path.join(workerDir, 'batches', retried.id))).toBe(false);

    flaky = 0;
    const plain = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const second = await worker(['--concurrency', '2', '--exit-when-idle']).done;
    expect(second.code, second.stderr).toBe(0);
    const ended = await plain.run.done;
    expect(ended.code).toBe(1);
    const [line] = results(ended.stdout).filter((l) => l.key === 'flaky-1');
    expect(line).toMatchObject({ status: 'error' });
    expect(line?.error).toContain('bad luck');
  });

  it('--retries in a batch stopped while the item ran: its failure is its result, not a retry', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, url, enqueue, worker } = await scene(context, await testDatabase('retrystop'));
    const answer = held();
    fake.respond(async () => {
      await answer.reply;
      return { fault: { kind: 'status', status: 400, message: 'still wrong' } };
    });
    home.file('items.jsonl', itemsJsonl(2));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--retries', '3', '--wait']);
    const running = worker(['--concurrency', '1']);
    await until(() => fake.requests.length === 1);
    const db = await openQueue(parseQueueUrl(url, '--queue'));
    try {
      await db.tx((tx) => stopBatch(tx, id, '--max-tokens'));
    } finally {
      await db.close();
    }
    answer.release();
    const waited = await run.done;
    expect(waited.code).toBe(4);
    expect(results(waited.stdout).map((l) => [l.key, l.status])).toEqual([
      ['ticket-0', 'error'],
      ['ticket-1', 'skipped'],
    ]);
    expect(fake.requests).toHaveLength(1);
    running.kill('SIGTERM');
    await running.done;
  });

  it('--max-failures 2: the batch stops at its second failure, the items not run are skipped, --wait exits 4', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('maxfail'));
    fake.respond(() => ({ fault: { kind: 'status', status: 400, message: 'always wrong' } }));
    home.file('items.jsonl', itemsJsonl(6));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--max-failures', '2', '--wait']);
    const ran = await worker(['--concurrency', '1', '--exit-when-idle']).done;
    expect(ran.code, ran.stderr).toBe(0);
    const waited = await run.done;
    expect(waited.code).toBe(4);
    expect(results(waited.stdout).map((l) => l.status)).toEqual([
      'error',
      'error',
      'skipped',
      'skipped',
      'skipped',
      'skipped',
    ]);
    expect(fake.requests).toHaveLength(2);
    expect(lines(waited.stderr).at(-1)).toMatch(
      `axe: batch ${id}: stopped by --max-failures: 0 completed, 2 failed, 4 skipped (axe batches resume ${id} --queue `,
    );
    expect(await sql('SELECT state, stopped_by, failed FROM axe.batches WHERE id = $1', [id])).toEqual([
      { state: 'stopped', stopped_by: '--max-failures', failed: 2 },
    ]);
  });
});

describe('axe worker: stopping', () => {
  it('a cancel reaches the running items within a second: they end cancelled, stored as such; the worker goes on', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, url, enqueue, worker, axe } = await scene(context, await testDatabase('cancel'));
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    home.file('items.jsonl', itemsJsonl(4));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const running = worker(['--concurrency', '2']);
    await until(() => fake.requests.length === 2);
    const cancel = await axe(['batches', 'cancel', id, '--queue', url]);
    expect(cancel.code, cancel.stderr).toBe(0);
    const waited = await run.done;
    expect(waited.code).toBe(1);
    const out = results(waited.stdout);
    expect(out.map((l) => l.status)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(fake.requests.every((r) => r.aborted)).toBe(true);
    await until(() => workerItems(running.stderrSoFar(), id).length === 2);
    expect(workerItems(running.stderrSoFar(), id).map(([, , status]) => status)).toEqual([
      'cancelled',
      'cancelled',
    ]);
    running.kill('SIGTERM');
    expect((await running.done).code).toBe(143);
  });

  it('SIGTERM: no new item; running items get --lease seconds, then are handed back and run by another worker', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('sigterm'));
    // The first worker's two requests are never answered; every later one is.
    fake.respond((request) =>
      request.index < 2 ? { fault: { kind: 'hang' } } : { text: `A:${request.lastUserText}` },
    );
    home.file('items.jsonl', itemsJsonl(3));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const first = worker(['--concurrency', '2', '--lease', '1']);
    await until(() => fake.requests.length === 2);
    first.kill('SIGTERM');
    const stopped = await first.done;
    expect(stopped.code).toBe(143);
    expect(stopped.stderr).toContain(
      'axe worker: SIGTERM: taking no new item; running items get 1 s, then are handed back',
    );
    expect(stopped.stderr.match(/: handed back\n/g)).toHaveLength(2);
    // Not an attempt, not a result: queued again, and the worker's row is gone.
    expect(
      await sql(
        `SELECT state, count(*)::int AS n, sum(attempts)::int AS attempts FROM axe.items WHERE batch_id = $1 GROUP BY state`,
        [id],
      ),
    ).toEqual([{ state: 'queued', n: 3, attempts: 0 }]);
    expect(await sql('SELECT id FROM axe.workers')).toEqual([]);
    expect(await sql('SELECT count(*)::int AS n FROM axe.results WHERE batch_id = $1', [id])).toEqual([
      { n: 0 },
    ]);

    const second = await worker(['--exit-when-idle']).done;
    expect(second.code, second.stderr).toBe(0);
    const waited = await run.done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(results(waited.stdout).map((l) => l.status)).toEqual(['completed', 'completed', 'completed']);
  });

  it('a silent worker is taken for dead once its lease is over: another runs its items; its late results are discarded and counted', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, url, enqueue, worker, sql, axe } = await scene(context, await testDatabase('silent'));
    const late = held();
    fake.respond(async (request) => {
      if (request.index < 2) await late.reply;
      return { text: `A:${request.lastUserText}` };
    });
    home.file('items.jsonl', itemsJsonl(2));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const silent = worker(['--concurrency', '2', '--lease', '2']);
    await until(() => fake.requests.length === 2);
    silent.kill('SIGSTOP');
    const other = worker(['--concurrency', '2', '--lease', '2']);
    const waited = await run.done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(results(waited.stdout).map((l) => [l.key, l.status])).toEqual([
      ['ticket-0', 'completed'],
      ['ticket-1', 'completed'],
    ]);
    // The silent worker wakes up and finishes what it had: first come, first stored.
    late.release();
    silent.kill('SIGCONT');
    await until(() => (silent.stderrSoFar().match(/another worker's result came first/g) ?? []).length === 2);
    expect(await sql('SELECT done, duplicates FROM axe.batches WHERE id = $1', [id])).toEqual([
      { done: 2, duplicates: 2 },
    ]);
    const shown = await axe(['batches', 'show', id, '--queue', url, '--json']);
    expect(shown.stdout).toMatch(/"duplicates":2/);
    for (const w of [silent, other]) w.kill('SIGTERM');
    for (const w of [silent, other]) expect((await w.done).code).toBe(143);
  });
});

describe('axe worker: a long-lived process', () => {
  it("records each item's run, linked to the batch, and keeps only [runs] keep of them as it goes", {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker } = await scene(context, await testDatabase('records'));
    home.file('config/axe/config.toml', '[runs]\nkeep = 2\n');
    fake.respond((request) => ({ text: `A:${request.lastUserText}` }));
    home.file('items.jsonl', itemsJsonl(101));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const ran = await worker(['--concurrency', '1', '--exit-when-idle']).done;
    expect(ran.code, ran.stderr).toBe(0);
    const waited = await run.done;
    expect(waited.code, waited.stderr).toBe(0);
    // Pruned after the 100th item: the newest two, and the 101st, which may have started by then.
    const kept = home.runIds();
    expect(kept.length).toBeGreaterThanOrEqual(2);
    expect(kept.length).toBeLessThanOrEqual(3);
    const last = results(waited.stdout).at(-1);
    expect(kept).toContain(last?.run_id);
    const record = JSON.parse(readFileSync(path.join(home.runsDir, last?.run_id ?? '', 'run.json'), 'utf8'));
    expect(record).toMatchObject({ batch: id, status: 'completed' });
  });
});

describe('axe worker: delivered twice', () => {
  it('a job delivered again after its item has its result is completed without running the item', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('twice'));
    fake.respond((request) => ({ text: `A:${request.lastUserText}` }));
    home.file('items.jsonl', itemsJsonl(1));
    const { id, run } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    expect((await worker(['--exit-when-idle']).done).code).toBe(0);
    expect((await run.done).code).toBe(0);
    // pg-boss hands the job out once more (as after an expiry), its batch still taken for running.
    await sql(`UPDATE axe_boss.job SET state = 'retry' WHERE name = $1`, [`axe-batch-${id}`]);
    await sql(`UPDATE axe.batches SET state = 'running' WHERE id = $1`, [id]);
    const again = await worker(['--exit-when-idle']).done;
    expect(again.code, again.stderr).toBe(0);
    expect(workerItems(again.stderr, id)).toEqual([]);
    expect(fake.requests).toHaveLength(1);
    expect(await sql('SELECT state FROM axe_boss.job WHERE name = $1', [`axe-batch-${id}`])).toEqual([
      { state: 'completed' },
    ]);
    expect(await sql('SELECT count(*)::int AS n FROM axe.results WHERE batch_id = $1', [id])).toEqual([
      { n: 1 },
    ]);
  });
});

describe('axe worker: its flags', () => {
  it('a bad URL exits 2 naming where it came from; an unreachable database exits 3 naming host:port, never the password', async () => {
    const env = { ...process.env, AXE_QUEUE: '' };
    const bad = await runAxe(['worker', '--queue', 'mysql://u:hunter22@db/x'], { env });
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toBe(
      'axe: --queue: expected a postgres:// or postgresql:// URL, got a mysql:// one\n',
    );
    const none = await runAxe(['worker'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^axe: --queue: name the PostgreSQL of the queue .*AXE_QUEUE\n$/);
    const lease = await runAxe(['worker', '--queue', 'postgres://h/x', '--lease', '0'], { env });
    expect(lease.stderr).toBe('axe: --lease: expected a positive whole number, got "0"\n');
    const away = await runAxe(['worker'], {
      env: { ...env, AXE_QUEUE: 'postgres://u:hunter22@127.0.0.1:1/x' },
    });
    expect(away).toMatchObject({ code: 3, stdout: '' });
    expect(away.stderr).toMatch(/^axe: cannot reach PostgreSQL at 127\.0\.0\.1:1 \(/);
    expect(away.stderr).not.toContain('hunter22');
    const help = await runAxe(['worker', '--help'], { env });
    expect(help.stdout).toMatch(/--exit-when-idle/);
    expect(help.stdout).toMatch(/Docs:\n {2}\S+docs\/scale\.md\n/);
  });
});
