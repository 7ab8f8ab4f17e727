import { describe, expect, it } from 'vitest';
import { testDatabase } from '../pg/index.js';
import { comparable, itemsJsonl, queueScenes, workerItems } from './queue.js';

/**
 * Batches on PostgreSQL, end to end: `axe run --map --queue` stores the batch, `axe worker`
 * processes (the built binary) run its items against the fake server, the results come back in
 * input order exactly as a local batch prints them. Each test has a database of its own, so the
 * workers of one never see another's batches.
 */
const scene = queueScenes();

describe('axe worker: many workers, one batch', () => {
  it('3 workers × 600 items: every result exactly once, and the lines a local --map run prints, byte for byte but run_id and duration_ms', {
    timeout: 600_000,
  }, async (context) => {
    const { home, fake, url, enqueue, worker, axe, sql } = await scene(context, await testDatabase('many'));
    fake.respond((request) => ({ text: `A:${request.lastUserText.toUpperCase()}` }));
    home.file('items.jsonl', itemsJsonl(600));
    const local = await axe([
      'run',
      'labeler',
      '--agents-dir',
      home.agentsDir,
      '--map',
      'items.jsonl',
      '--key',
      'id',
    ]);
    expect(local.code, local.stderr).toBe(0);
    expect(comparable(local.stdout)).toHaveLength(600);
    fake.reset();
    fake.respond((request) => ({ text: `A:${request.lastUserText.toUpperCase()}` }));

    const { id, run: waiting } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    expect(waiting.stderrSoFar()).toMatch(new RegExp(`^axe: batch ${id}: 600 items queued\\n`));
    const workers = [1, 2, 3].map(() => worker(['--concurrency', '8', '--lease', '30', '--exit-when-idle']));
    const waited = await waiting.done;
    expect(waited.code, waited.stderr).toBe(0);
    expect(comparable(waited.stdout)).toEqual(comparable(local.stdout));

    const ended = await Promise.all(workers.map((w) => w.done));
    for (const result of ended) expect(result.code, result.stderr).toBe(0);
    // Each item ran once, on one worker: one request per item, one line per item among the workers.
    const ran = ended.flatMap((result) => workerItems(result.stderr, id));
    expect(ran.map(([, key]) => key).sort()).toEqual(
      Array.from({ length: 600 }, (_, i) => `ticket-${i}`).sort(),
    );
    expect(ran.every(([, , status]) => status === 'completed')).toBe(true);
    expect(fake.requests).toHaveLength(600);
    expect(new Set(fake.requests.map((r) => r.lastUserText)).size).toBe(600);
    const [batch] = await sql<{ state: string; done: number; duplicates: number }>(
      'SELECT state, done, duplicates FROM axe.batches WHERE id = $1',
      [id],
    );
    expect(batch).toEqual({ state: 'done', done: 600, duplicates: 0 });

    const shown = await axe(['batches', 'show', id, '--queue', url, '--results']);
    expect(shown.code, shown.stderr).toBe(0);
    expect(comparable(shown.stdout)).toEqual(comparable(local.stdout));
  });
});

describe('axe worker: queue protocols', () => {
  it('a batch of another protocol is left alone by a worker that says why once; its own batches complete', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('protocols'));
    fake.respond((request) => ({ text: `A:${request.lastUserText}` }));
    home.file('newer.jsonl', itemsJsonl(3, 'newer'));
    home.file('ours.jsonl', itemsJsonl(3, 'ours'));
    const newer = await enqueue('newer.jsonl', ['--key', 'id']);
    expect((await newer.run.done).code).toBe(0);
    // As a later axe would have queued it: its batch and its jobs say protocol 2.
    await sql('UPDATE axe.batches SET protocol = 2 WHERE id = $1', [newer.id]);
    await sql(`UPDATE axe_boss.job SET data = jsonb_set(data, '{protocol}', '2') WHERE name = $1`, [
      `axe-batch-${newer.id}`,
    ]);
    const ours = await enqueue('ours.jsonl', ['--key', 'id']);
    expect((await ours.run.done).code).toBe(0);

    const result = await worker(['--concurrency', '2', '--exit-when-idle']).done;
    expect(result.code, result.stderr).toBe(0);
    const said = result.stderr
      .split('\n')
      .filter((line) => line.includes(`batch ${newer.id} needs queue protocol 2`));
    expect(said).toEqual([
      `axe worker: batch ${newer.id} needs queue protocol 2; this axe speaks 1: left for another worker`,
    ]);
    expect(workerItems(result.stderr, ours.id).map(([, key, status]) => [key, status])).toEqual(
      expect.arrayContaining([
        ['ours-0', 'completed'],
        ['ours-1', 'completed'],
        ['ours-2', 'completed'],
      ]),
    );
    expect(workerItems(result.stderr, newer.id)).toEqual([]);
    expect(fake.requests.map((r) => r.lastUserText).sort()).toEqual(['ours 0', 'ours 1', 'ours 2']);
    const items = await sql<{ state: string; n: number }>(
      'SELECT state, count(*)::int AS n FROM axe.items WHERE batch_id = $1 GROUP BY state',
      [newer.id],
    );
    expect(items).toEqual([{ state: 'queued', n: 3 }]);
    expect(await sql('SELECT idx FROM axe.results WHERE batch_id = $1', [newer.id])).toEqual([]);
  });
});
