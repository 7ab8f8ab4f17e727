import { describe, expect, it } from 'vitest';
import { startPrivatePostgres, testDatabase } from '../pg/index.js';
import { itemsJsonl, queueScenes, until } from './queue.js';

/**
 * Batches on PostgreSQL when things break: a worker killed in the middle of its items, PostgreSQL
 * stopped and started again under running workers and a waiting client. Nothing is lost, nothing
 * is stored twice.
 */
const scene = queueScenes();

interface Line {
  key: string;
  status: string;
  answer: string | null;
}

function parsed(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
}

describe('axe worker: a worker killed mid-item', () => {
  it('with --lease 3, the items it held are run again by the other workers once its lease has run out', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('killed'));
    // The first two requests (the doomed worker's) are never answered; every later one is.
    fake.respond((request) =>
      request.index < 2 ? { fault: { kind: 'hang' } } : { text: `A:${request.lastUserText}` },
    );
    home.file('items.jsonl', itemsJsonl(6));
    const { id, run: waiting } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const doomed = worker(['--concurrency', '2', '--lease', '3']);
    await until(() => fake.requests.length === 2);
    const held = fake.requests.map((r) => r.lastUserText).sort();
    const running = await sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM axe.items WHERE batch_id = $1 AND state = 'running'`,
      [id],
    );
    expect(running).toEqual([{ n: 2 }]);
    doomed.kill('SIGKILL');
    await doomed.done;
    const others = [
      worker(['--concurrency', '2', '--lease', '3']),
      worker(['--concurrency', '2', '--lease', '3']),
    ];

    const waited = await waiting.done;
    expect(waited.code, waited.stderr).toBe(0);
    const out = parsed(waited.stdout);
    expect(out.map((l) => [l.key, l.status])).toEqual(
      Array.from({ length: 6 }, (_, i) => [`ticket-${i}`, 'completed']),
    );
    // The held items were asked again (once more each), the others once.
    const asked = fake.requests.map((r) => r.lastUserText);
    for (const message of held) expect(asked.filter((m) => m === message)).toHaveLength(2);
    expect(asked).toHaveLength(8);
    for (const line of out) expect(line.answer).toBe(`A:${line.key.replace('-', ' ')}`);
    const [batch] = await sql('SELECT state, done, duplicates FROM axe.batches WHERE id = $1', [id]);
    expect(batch).toEqual({ state: 'done', done: 6, duplicates: 0 });
    // The dead worker is gone from the workers' table, swept by the others.
    expect(await sql('SELECT id FROM axe.workers WHERE pid = $1', [doomed.pid])).toEqual([]);
    for (const other of others) other.kill('SIGTERM');
    await Promise.all(others.map((other) => other.done));
  });
});

describe('axe worker: PostgreSQL restarted mid-batch', () => {
  it('the workers and the waiting client reconnect; every item has its one result, none is asked twice', {
    timeout: 300_000,
  }, async (context) => {
    const server = await startPrivatePostgres();
    const { home, fake, enqueue, worker, sql } = await scene(
      context,
      typeof server === 'string' ? server : { url: await server.database('restart') },
    );
    if (typeof server === 'string') return;
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The first two answers wait until PostgreSQL is down: their results are stored after it is back.
    fake.respond(async (request) => {
      if (request.index < 2) await gate;
      return { text: `A:${request.lastUserText}` };
    });
    home.file('items.jsonl', itemsJsonl(8));
    const { id, run: waiting } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const running = worker(['--concurrency', '2', '--lease', '30', '--exit-when-idle']);
    await until(() => fake.requests.length === 2);
    await server.stop();
    release();
    await until(() => fake.requests.slice(0, 2).every((r) => r.finishedAt !== undefined));
    await server.start();

    const waited = await waiting.done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(parsed(waited.stdout).map((l) => [l.key, l.status, l.answer])).toEqual(
      Array.from({ length: 8 }, (_, i) => [`ticket-${i}`, 'completed', `A:ticket ${i}`]),
    );
    const ended = await running.done;
    expect(ended.code, ended.stderr).toBe(0);
    expect(fake.requests.map((r) => r.lastUserText).sort()).toEqual(
      Array.from({ length: 8 }, (_, i) => `ticket ${i}`).sort(),
    );
    const [batch] = await sql('SELECT state, done, duplicates FROM axe.batches WHERE id = $1', [id]);
    expect(batch).toEqual({ state: 'done', done: 8, duplicates: 0 });
    expect(await sql('SELECT count(*)::int AS n FROM axe.results WHERE batch_id = $1', [id])).toEqual([
      { n: 8 },
    ]);
  });
});
