import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AgentSpec } from '../agent/spec.js';
import { checkedItems } from '../batch/checked-items.js';
import type { MapFormat } from '../batch/input.js';
import { type BatchItem, toItem } from '../batch/items.js';
import type { OutFormat } from '../batch/result-sink.js';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { newRunId } from '../record/run-id.js';
import { collectTree } from './agent-tree.js';
import type { QueueDb, Tx } from './db.js';
import { jobOf, QUEUE_PROTOCOL } from './protocol.js';
import { insertUnran, stopBatch } from './store.js';

/** What `axe run <agent> --map FILE --queue URL` asks, its flags read and its agent loaded. */
export interface QueuedBatchRequest {
  /** The agent as named, its spec (loaded from `spec.source`), and where agents and skills are found. */
  agent: string;
  spec: AgentSpec;
  searchDirs: string[];
  configDir: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The items: a file, or `-` for `stdin`. */
  input: { file: string; format: MapFormat };
  /** `--map -`: where the items come from. */
  stdin?: NodeJS.ReadableStream;
  /** Ctrl-C: the transaction is rolled back, nothing is stored. */
  signal?: AbortSignal;
  strictInput: boolean;
  keyField?: string;
  prompt?: string;
  defaultMessage: string;
  timeoutSeconds: number;
  model?: string;
  /** `--system`: replaces the agent's system prompt for every item, on the workers. */
  system?: string;
  /** `--skill` and `--workdir` of the top-level agent: collected into the stored tree. */
  skill?: string;
  workdir?: string;
  maxTokens?: number;
  maxCostUsd?: number;
  maxFailures?: number;
  rpm?: number;
  tpm?: number;
  outFormat: OutFormat;
  recordRuns: boolean;
  /** `--retries N`: a failed item runs again up to N times before its failure is its result. */
  retries: number;
}

/** Items written per statement (as arrays: a chunk's size is not bound by PostgreSQL's parameter limit). */
const ITEM_CHUNK = 1000;

/**
 * Stores a new batch on the queue: its input read and checked as a local batch's is (a refusal
 * leaves nothing behind), its agent tree, its items and the jobs that hand them to workers, all in
 * one transaction. An unreadable item gets its `error` result at once and no job. Returns the
 * batch's id and its number of items.
 */
export async function enqueueBatch(
  db: QueueDb,
  asked: QueuedBatchRequest,
): Promise<{ id: string; items: number }> {
  if (asked.input.file !== '-' || asked.stdin === undefined)
    return store(db, asked, asked.input.file, asked.input.file);
  // `--map -`: the items are read from a file, as a local batch's are: stdin is kept in a private
  // temporary one while the batch is stored.
  const dir = await mkdtemp(join(tmpdir(), 'axe-map-'));
  try {
    const file = join(dir, 'input');
    try {
      await pipeline(asked.stdin, createWriteStream(file, { mode: 0o600, flags: 'wx' }));
    } catch (error) {
      throw new ConfigError(`--map -: cannot keep stdin in ${file} (${fsErrorReason(error)})`);
    }
    return await store(db, asked, file, 'stdin');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function store(
  db: QueueDb,
  asked: QueuedBatchRequest,
  file: string,
  label: string,
): Promise<{ id: string; items: number }> {
  const tree = await collectTree(asked.spec, {
    searchDirs: asked.searchDirs,
    configDir: asked.configDir,
    env: asked.env,
    cwd: asked.cwd,
    ...(asked.skill !== undefined ? { skill: asked.skill } : {}),
    ...(asked.workdir !== undefined ? { workdir: asked.workdir } : {}),
  });
  const id = newRunId();
  // pg-boss makes a queue's table outside any transaction of ours: made first, removed on a refusal.
  await db.jobs.createQueue(id, asked.timeoutSeconds * 2 + 600);
  const digest = createHash('sha256');
  let counted: { items: number; failed: number };
  try {
    counted = await db.tx(async (tx) => {
      for (const [sha256, content] of tree.blobs) {
        await tx.query('INSERT INTO axe.blobs (sha256, content) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
          sha256,
          content,
        ]);
      }
      await tx.query(
        `INSERT INTO axe.batches (id, protocol, agent, tree, request, items, retries, max_tokens, max_cost_usd, max_failures)
         VALUES ($1, $2, $3, $4, $5, 0, $6, $7, $8, $9)`,
        [
          id,
          QUEUE_PROTOCOL,
          asked.agent,
          JSON.stringify(tree.manifest),
          JSON.stringify(requestOf(asked, label)),
          asked.retries,
          asked.maxTokens ?? null,
          asked.maxCostUsd ?? null,
          asked.maxFailures ?? null,
        ],
      );
      const rules = {
        spec: asked.spec,
        defaultMessage: asked.defaultMessage,
        ...(asked.keyField !== undefined ? { keyField: asked.keyField } : {}),
        ...(asked.prompt !== undefined ? { prompt: asked.prompt } : {}),
      };
      const checks = {
        strictInput: asked.strictInput,
        label,
        ...(asked.keyField !== undefined ? { keyField: asked.keyField } : {}),
      };
      let chunk: { idx: number; item: BatchItem }[] = [];
      let items = 0;
      let failed = 0;
      for await (const raw of checkedItems(file, asked.input.format, checks, digest)) {
        asked.signal?.throwIfAborted();
        const item = toItem(raw, rules);
        if (item.error !== undefined) failed++;
        chunk.push({ idx: items++, item });
        if (chunk.length >= ITEM_CHUNK) {
          await storeItems(tx, id, chunk);
          chunk = [];
        }
      }
      await storeItems(tx, id, chunk);
      // The unreadable items have their results already: a batch of nothing else is done now.
      await tx.query(
        `UPDATE axe.batches SET items = $2::int, done = $3::int, failed = $3::int,
           state = CASE WHEN $3::int >= $2::int THEN 'done' ELSE state END,
           finished_at = CASE WHEN $3::int >= $2::int THEN now() END,
           request = jsonb_set(request, '{input,digest}', to_jsonb($4::text))
         WHERE id = $1`,
        [id, items, failed, digest.digest('hex')],
      );
      // Unreadable items count as failures, as locally: enough of them stop the batch at once.
      if (asked.maxFailures !== undefined && failed >= asked.maxFailures && failed < items) {
        await stopBatch(tx, id, '--max-failures');
      }
      return { items, failed };
    });
  } catch (error) {
    await db.jobs.deleteQueue(id).catch(() => undefined);
    throw error;
  }
  return { id, items: counted.items };
}

/** What each item's run needs besides its message; never an API key (workers use their own). */
function requestOf(asked: QueuedBatchRequest, label: string): Record<string, unknown> {
  return {
    ...(asked.prompt !== undefined ? { prompt: asked.prompt } : {}),
    ...(asked.keyField !== undefined ? { keyField: asked.keyField } : {}),
    ...(asked.model !== undefined ? { model: asked.model } : {}),
    ...(asked.system !== undefined ? { system: asked.system } : {}),
    ...(asked.skill !== undefined ? { skill: asked.skill } : {}),
    ...(asked.workdir !== undefined ? { workdir: asked.workdir } : {}),
    timeoutSeconds: asked.timeoutSeconds,
    ...(asked.rpm !== undefined ? { rpm: asked.rpm } : {}),
    ...(asked.tpm !== undefined ? { tpm: asked.tpm } : {}),
    recordRuns: asked.recordRuns,
    input: { file: label, format: asked.input.format, digest: '' },
    outFormat: asked.outFormat,
  };
}

/** A chunk of items: their rows, the results of the unreadable ones, the jobs of the others. */
async function storeItems(
  tx: Tx,
  batchId: string,
  chunk: readonly { idx: number; item: BatchItem }[],
): Promise<void> {
  if (chunk.length === 0) return;
  await tx.query(
    `INSERT INTO axe.items (batch_id, idx, key, item, state)
     SELECT $1, idx, key, item::jsonb, state FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) AS i (idx, key, item, state)`,
    [
      batchId,
      chunk.map(({ idx }) => idx),
      chunk.map(({ item }) => item.key),
      chunk.map(({ item }) => JSON.stringify(item)),
      chunk.map(({ item }) => (item.error !== undefined ? 'done' : 'queued')),
    ],
  );
  await insertUnran(
    tx,
    batchId,
    'error',
    chunk.filter(({ item }) => item.error !== undefined),
  );
  const jobs = chunk.filter(({ item }) => item.error === undefined).map(({ idx }) => jobOf(batchId, idx, 0));
  await tx.jobs.insert(batchId, jobs);
}
