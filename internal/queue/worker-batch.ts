import { join } from 'node:path';
import { loadAgentFile } from '../agent/load.js';
import { withSystemPrompt } from '../agent/spec.js';
import type { ItemRunner } from '../batch/item-run.js';
import { type ItemAsk, itemRecords, itemRunBase } from '../batch/session.js';
import type { GlobalConfig } from '../config/global.js';
import type { HttpPool } from '../http/pool.js';
import { pricing, treeDollars } from '../prices/index.js';
import type { EmitEvent } from '../runner/events.js';
import { type AgentTreeManifest, copyWorkdir, materializeTree } from './agent-tree.js';
import type { Query } from './db.js';
import { QueueBudget, type QueueBudgetDeps } from './queue-budget.js';

/** What a worker needs of a queued batch's row to run its items. */
export interface QueuedBatch {
  id: string;
  agent: string;
  tree: AgentTreeManifest;
  /** The flags of the enqueue that each item's run takes. */
  request: ItemAsk & { system?: string; recordRuns?: boolean };
  retries: number;
  maxFailures: number | null;
  maxTokens: number | null;
  maxCostUsd: number | null;
}

/** The worker's own side: its environment and config (keys stay on workers), its pool, its tree cache. */
export interface WorkerSide {
  workerId: string;
  env: NodeJS.ProcessEnv;
  globalConfig: () => Promise<GlobalConfig>;
  pool: HttpPool;
  /** The worker's `--workdir`: stored agent trees, and each batch's copy of its tree's `work/`. */
  workdir: string;
  emit: EmitEvent;
}

/** A batch as this worker runs it: its items' runner and, when capped, its shared budget. */
export interface WorkerBatch {
  row: QueuedBatch;
  runner: ItemRunner;
  budget?: QueueBudget;
}

/** Reads a queued batch's row (undefined once it is deleted). */
export async function readQueuedBatch(query: Query, id: string): Promise<QueuedBatch | undefined> {
  const rows = await query<{
    id: string;
    agent: string;
    tree: AgentTreeManifest;
    request: QueuedBatch['request'];
    retries: number;
    max_failures: number | null;
    max_tokens: string | null;
    max_cost_usd: number | null;
  }>(
    'SELECT id, agent, tree, request, retries, max_failures, max_tokens, max_cost_usd FROM axe.batches WHERE id = $1',
    [id],
  );
  const row = rows[0];
  if (!row) return undefined;
  return {
    id: row.id,
    agent: row.agent,
    tree: row.tree,
    request: row.request,
    retries: row.retries,
    maxFailures: row.max_failures,
    maxTokens: row.max_tokens === null ? null : Number(row.max_tokens),
    maxCostUsd: row.max_cost_usd,
  };
}

/**
 * A queued batch made ready to run here: its stored agent tree written under the worker's tree
 * cache (once per digest) and loaded, its flags read as a local batch reads them, with this
 * worker's environment and config.toml.
 */
export async function openWorkerBatch(
  row: QueuedBatch,
  side: WorkerSide,
  readBlob: (sha256: string) => Promise<Buffer>,
  budgetDeps: QueueBudgetDeps,
): Promise<WorkerBatch> {
  const tree = await materializeTree(row.tree, readBlob, join(side.workdir, 'trees'));
  // The batch's own copy of `work/`: what its items' tools write stays out of the stored tree,
  // which other batches of the same tree use as it was queued.
  const cwd = await copyWorkdir(tree, join(side.workdir, 'batches', row.id));
  const loaded = await loadAgentFile(tree.agentFile, side.env);
  const { request } = row;
  // `--system` of the enqueue replaces the agent's system prompt for every item, as locally.
  const spec = withSystemPrompt(loaded, request.system);
  const base = itemRunBase(spec, request, {
    env: side.env,
    searchDirs: tree.searchDirs,
    configDir: tree.configDir,
    globalConfig: side.globalConfig,
  });
  const price = pricing(await side.globalConfig().catch(() => undefined), side.env);
  const budget =
    row.maxTokens !== null || row.maxCostUsd !== null
      ? new QueueBudget(
          row.id,
          side.workerId,
          {
            ...(row.maxTokens !== null ? { maxTokens: row.maxTokens } : {}),
            ...(row.maxCostUsd !== null ? { maxCostUsd: row.maxCostUsd } : {}),
          },
          budgetDeps,
        )
      : undefined;
  const runner: ItemRunner = {
    batchId: row.id,
    spec,
    // The copy of `work/` stands for the directory the batch was queued from: relative workdirs
    // (the agent's, the batch's `--workdir`) are below it, as they were there.
    base: { ...base, cwd },
    ...(budget ? { budget } : {}),
    costOf: (result) => treeDollars(result, price)?.usd,
    shared: { pool: side.pool },
    ...(request.recordRuns
      ? {
          records: itemRecords(
            request,
            {
              agent: row.agent,
              agentFile: tree.agentFile,
              cwd,
              agentsDirs: tree.searchDirs,
              timeoutSeconds: base.timeoutSeconds,
            },
            side,
          ),
        }
      : {}),
    emit: side.emit,
  };
  return { row, runner, ...(budget ? { budget } : {}) };
}
