import type { TestContext } from 'vitest';
import { afterEach } from 'vitest';
import type { FakeLlm } from '../fake-llm/types.js';
import { query } from '../pg/server.js';
import { skipBecause } from '../skip.js';
import { agentToml } from './agents.js';
import {
  type AxeResult,
  e2eHomes,
  lines,
  type RunningAxe,
  runAxe,
  startAxe,
  type TempHome,
  waitFor,
} from './cli.js';

/**
 * The end-to-end tests of batches on PostgreSQL: a home with the `labeler` agent, the fake server,
 * a database of the test's own (from test/pg/) and the built `axe` as enqueuer, workers and control.
 * Every process a test starts is killed after it, should the test fail before it ends.
 */
const started: RunningAxe[] = [];
afterEach(async () => {
  for (const axe of started.splice(0)) {
    axe.kill('SIGKILL');
    await axe.done;
  }
});

/** No wait of these tests has a bound of its own: the test's timeout is the bound. */
const UNBOUNDED = 3_600_000;

export interface QueueScene {
  home: TempHome;
  fake: FakeLlm;
  /** The queue's URL (a database of the test's own). */
  url: string;
  /** `axe …` in the home, against the fake server. */
  axe(args: string[]): Promise<AxeResult>;
  /** `axe run labeler --map FILE --queue URL …` started: resolves with the batch id once queued. */
  enqueue(file: string, args?: string[]): Promise<{ id: string; run: RunningAxe }>;
  /** `axe worker --queue URL …`, started. */
  worker(args: string[]): RunningAxe;
  /** One statement on the queue's database. */
  sql<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<R[]>;
}

/**
 * For a test file: `scene(context, database)` with what test/pg gave (a database, or why there is
 * none: the test is skipped with that reason).
 */
export function queueScenes(): (
  context: TestContext,
  database: { url: string } | string,
) => Promise<QueueScene> {
  const setup = e2eHomes();
  return async (context, database) => {
    if (typeof database === 'string') return skipBecause(context, database);
    const { url } = database;
    const { home, fake } = await setup();
    home.agent('labeler', agentToml('labeler'));
    const options = () => ({ env: home.env(fake.url), cwd: home.root });
    const start = (args: string[]) => {
      const axe = startAxe(args, options());
      started.push(axe);
      return axe;
    };
    return {
      home,
      fake,
      url,
      axe: (args) => runAxe(args, options()),
      enqueue: async (file, args = []) => {
        const run = start([
          'run',
          'labeler',
          '--agents-dir',
          home.agentsDir,
          '--map',
          file,
          '--queue',
          url,
          ...args,
        ]);
        let id: string | undefined;
        await Promise.race([
          waitFor(() => {
            id = /axe: batch (\S+): \d+ items queued\n/.exec(run.stderrSoFar())?.[1];
            return id !== undefined;
          }, UNBOUNDED),
          run.done.then((result) => {
            if (id === undefined)
              throw new Error(`the enqueue ended (${result.code}) without a batch: ${result.stderr}`);
          }),
        ]);
        return { id: id as string, run };
      },
      worker: (args) => start(['worker', '--queue', url, ...args]),
      sql: async <R>(text: string, values: unknown[] = []) => (await query(url, text, values)).rows as R[],
    };
  };
}

/** Polls `check` until it holds; bounded by the test's timeout only. */
export async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Result lines as text with what may differ between two runs of one item (its run id and duration) blanked. */
export function comparable(stdout: string): string[] {
  return lines(stdout).map((line) =>
    line.replace(/"run_id":(null|"[^"]*")/, '"run_id":_').replace(/"duration_ms":\d+/, '"duration_ms":_'),
  );
}

/** The items file: `count` JSONL items with an id and a message of their own. */
export function itemsJsonl(count: number, prefix = 'ticket'): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++)
    out.push(JSON.stringify({ id: `${prefix}-${i}`, message: `${prefix} ${i}` }));
  return `${out.join('\n')}\n`;
}

/** The per-item lines a worker printed for batch `id`: `[line, key, status]`. */
export function workerItems(stderr: string, id: string): [number, string, string][] {
  const pattern = new RegExp(`^axe worker: ${id} line (\\d+) \\(key ([^)]*)\\): (\\w+) in `, 'gm');
  return [...stderr.matchAll(pattern)].map((m) => [Number(m[1]), m[2] as string, m[3] as string]);
}
