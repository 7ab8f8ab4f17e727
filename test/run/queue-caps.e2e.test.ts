import { describe, expect, it } from 'vitest';
import { testDatabase } from '../pg/index.js';
import { itemsJsonl, queueScenes, until, workerItems } from './queue.js';

/**
 * A batch on PostgreSQL held to its caps by three workers at once, and stopped by `axe batches
 * cancel` while a worker runs its items.
 */
const scene = queueScenes();

interface Line {
  key: string;
  status: string;
  cost_usd: number | null;
}

function parsed(stdout: string): Line[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
}

describe('axe worker: caps across workers', () => {
  it('--max-cost over 3 workers: no new call once spent, overrun within the calls in flight, the rest skipped, exit 4', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, enqueue, worker, sql } = await scene(context, await testDatabase('max_cost'));
    home.agent('labeler', 'name = "labeler"\nmodel = "anthropic/claude-test"\n\n[params]\nmax_tokens = 5\n');
    // $1,000 per million tokens: each call (10 in, 5 out) costs $0.015. The workers read the same
    // config.toml (their own, as keys and prices stay with the workers).
    home.file('config/axe/config.toml', '[prices."anthropic/claude-test"]\ninput = 1000\noutput = 1000\n');
    fake.respond((request) => ({ text: `A:${request.lastUserText}` }));
    home.file('items.jsonl', itemsJsonl(40));
    const { id, run: waiting } = await enqueue('items.jsonl', [
      '--key',
      'id',
      '--max-cost',
      '0.05',
      '--wait',
    ]);
    const workers = [1, 2, 3].map(() => worker(['--concurrency', '2', '--exit-when-idle']));

    const waited = await waiting.done;
    expect(waited.code, waited.stderr).toBe(4);
    expect(waited.stderr).toMatch(/stopped by --max-cost: \d+ completed, \d+ failed, \d+ skipped/);
    const out = parsed(waited.stdout);
    expect(out.map((l) => l.key)).toEqual(Array.from({ length: 40 }, (_, i) => `ticket-${i}`));
    const ran = out.filter((l) => l.status !== 'skipped');
    expect(ran.length).toBeGreaterThanOrEqual(3);
    expect(ran.length).toBeLessThan(40);
    for (const line of ran) expect(['completed', 'budget_exceeded']).toContain(line.status);
    const completed = ran.filter((l) => l.status === 'completed');
    expect(completed[0]?.cost_usd).toBeCloseTo(0.015, 6);
    // Over the cap by at most the calls in flight across the workers when it was crossed (3 × 2).
    const spent = ran.reduce((sum, l) => sum + (l.cost_usd ?? 0), 0);
    expect(spent).toBeLessThanOrEqual(0.05 + 6 * 0.015 + 1e-9);
    expect(fake.requests).toHaveLength(completed.length);
    const [batch] = await sql<{
      state: string;
      stopped_by: string;
      spent_usd: number;
      reserved_usd: number;
      in_flight: number;
    }>('SELECT state, stopped_by, spent_usd, reserved_usd, in_flight FROM axe.batches WHERE id = $1', [id]);
    // Every call's hold freed: nothing reserved, nothing in flight.
    expect(batch).toMatchObject({
      state: 'stopped',
      stopped_by: '--max-cost',
      in_flight: 0,
      reserved_usd: 0,
    });
    expect(await sql('SELECT id FROM axe.holds')).toEqual([]);
    expect(batch?.spent_usd).toBeCloseTo(spent, 9);
    for (const ended of await Promise.all(workers.map((w) => w.done)))
      expect(ended.code, ended.stderr).toBe(0);
  });
});

describe('axe batches cancel --queue', () => {
  it('reaches the items running on a worker: they end cancelled, as do the queued ones; --wait exits 1', {
    timeout: 300_000,
  }, async (context) => {
    const { home, fake, url, enqueue, worker, axe, sql } = await scene(context, await testDatabase('cancel'));
    // No answer ever comes: the running items end only by being cancelled.
    fake.respond(() => ({ fault: { kind: 'hang' } }));
    home.file('items.jsonl', itemsJsonl(6));
    const { id, run: waiting } = await enqueue('items.jsonl', ['--key', 'id', '--wait']);
    const running = worker(['--concurrency', '2', '--exit-when-idle']);
    await until(() => fake.requests.length === 2);

    const cancelled = await axe(['batches', 'cancel', id, '--queue', url]);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const waited = await waiting.done;
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(new RegExp(`axe: batch ${id}: cancelled`));
    expect(parsed(waited.stdout).map((l) => [l.key, l.status])).toEqual(
      Array.from({ length: 6 }, (_, i) => [`ticket-${i}`, 'cancelled']),
    );
    const ended = await running.done;
    expect(ended.code, ended.stderr).toBe(0);
    // The two that were running were cut off by their worker, not left to time out.
    expect(workerItems(ended.stderr, id).map(([, , status]) => status)).toEqual(['cancelled', 'cancelled']);
    await until(() => fake.requests.every((r) => r.finishedAt !== undefined));
    expect(fake.requests.map((r) => r.aborted)).toEqual([true, true]);
    const [batch] = await sql('SELECT state, stopped_by, done FROM axe.batches WHERE id = $1', [id]);
    expect(batch).toEqual({ state: 'cancelled', stopped_by: 'cancel', done: 6 });
  });
});
