import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { AgentSpec } from '../agent/spec.js';
import { DEFAULT_TIMEOUT_SECONDS } from '../agent/spec.js';
import { Budget } from '../budget/budget.js';
import { CassettePlayer, CassetteRecorder } from '../cassette/cassette.js';
import type { GlobalConfig } from '../config/global.js';
import { ConfigError, UnpricedModelError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { type Pricer, pricing, treeDollars } from '../prices/index.js';
import { createHttpPool } from '../provider/index.js';
import { RateGates } from '../ratelimit/index.js';
import { runsDir } from '../record/store.js';
import type { EmitEvent } from '../runner/events.js';
import { resolveModel } from '../runner/resolve.js';
import type { BatchTrace } from '../telemetry/batch-trace.js';
import { checkedItems } from './checked-items.js';
import { inputDigest, type MapFormat } from './input.js';
import type { ItemRunBase, ItemRunner } from './item-run.js';
import { Journal, readJournal } from './journal.js';
import { lockBatch } from './lock.js';
import type { BatchCounts } from './progress.js';
import type { ResultLine } from './result-line.js';
import { type BatchControl, startBatch } from './run-batch.js';
import {
  type BatchRecord,
  batchesDir,
  createBatchDir,
  findBatch,
  readBatchRecord,
  writeBatchRecord,
} from './store.js';

/** What `axe run <agent> --map FILE` asks, its flags read. */
export interface NewBatch extends Omit<BatchRecord, 'version' | 'id' | 'createdAt' | 'input'> {
  input: { file: string; format: MapFormat };
  /** `--strict-input`: a malformed item refuses the batch before anything starts. */
  strictInput: boolean;
  /** `--map -`: the input, kept in the batch's directory so that a resume can read it again. */
  stdin?: NodeJS.ReadableStream;
}

/** A batch ready to run: its record and directory, and what its journal holds already. */
export interface BatchSession {
  record: BatchRecord;
  dir: string;
  journaled: ReadonlyMap<number, ResultLine>;
  retryFailed: boolean;
}

/**
 * A new batch: its input read once before anything starts (the items counted, its digest taken,
 * `--key`'s keys checked unique, and with `--strict-input` every item readable), then its
 * directory and `batch.json` made.
 */
export async function prepareBatch(asked: NewBatch, env: NodeJS.ProcessEnv): Promise<BatchSession> {
  const dir = batchesDir(env);
  const { id, path } = createBatchDir(dir);
  let file = resolve(asked.cwd, asked.input.file);
  if (asked.stdin) {
    file = join(path, 'input');
    try {
      await pipeline(asked.stdin, createWriteStream(file, { mode: 0o600, flags: 'wx' }));
    } catch (error) {
      throw new ConfigError(`--map -: cannot keep stdin in ${file} (${fsErrorReason(error)})`);
    }
  }
  const hash = createHash('sha256');
  let items = 0;
  const checks = {
    strictInput: asked.strictInput,
    label: asked.stdin ? 'stdin' : file,
    ...(asked.keyField !== undefined ? { keyField: asked.keyField } : {}),
  };
  for await (const _ of checkedItems(file, asked.input.format, checks, hash)) items++;
  const { strictInput: _strict, stdin: _stdin, ...rest } = asked;
  const record: BatchRecord = {
    ...rest,
    version: 1,
    id,
    createdAt: new Date().toISOString(),
    input: {
      file,
      format: asked.input.format,
      digest: hash.digest('hex'),
      items,
      ...(asked.stdin ? { stdin: true } : {}),
    },
  };
  await writeBatchRecord(dir, record);
  return { record, dir: path, journaled: new Map(), retryFailed: false };
}

/**
 * `axe batches resume <id|last>`: the batch as it was asked, with what its journal holds; refused
 * (exit 2) when its input changed since (unless `force`).
 */
export async function prepareResume(
  ref: string,
  options: { force: boolean; retryFailed: boolean },
  env: NodeJS.ProcessEnv,
): Promise<BatchSession> {
  const dir = batchesDir(env);
  const id = findBatch(dir, ref);
  const record = await readBatchRecord(dir, id);
  let digest: string;
  try {
    digest = await inputDigest(record.input.file);
  } catch (error) {
    throw new ConfigError(
      `batch ${id}: cannot read its input ${record.input.file} (${fsErrorReason(error)})`,
    );
  }
  if (digest !== record.input.digest && !options.force) {
    throw new ConfigError(
      `batch ${id}: its input ${record.input.file} changed since the batch started (--force resumes it anyway)`,
    );
  }
  const path = join(dir, id);
  return { record, dir: path, journaled: await readJournal(path), retryFailed: options.retryFailed };
}

/** What the CLI gives a batch's run: where results and events go, and its config. */
export interface BatchOutlets {
  env: NodeJS.ProcessEnv;
  searchDirs: string[];
  configDir: string;
  globalConfig: () => Promise<GlobalConfig>;
  write: (result: ResultLine) => void;
  emit: EmitEvent;
  onCounts?: (counts: BatchCounts) => void;
  defaultMessage: string;
  /** When OpenTelemetry's variables ask for traces: the batch's trace. */
  trace?: BatchTrace;
}

/**
 * Runs a prepared batch: takes its lock (one process per batch), opens its journal, its pool and
 * its cassette, and starts it. `finished` closes them all and, for `--record`, publishes the
 * cassette of a batch whose every item completed.
 */
export async function runBatch(
  session: BatchSession,
  spec: AgentSpec,
  outlets: BatchOutlets,
): Promise<{
  control: BatchControl;
  finished: Promise<{ counts: BatchCounts; stoppedBy?: string; recordError?: string }>;
}> {
  const { record } = session;
  await lockBatch(session.dir, record.id);
  const journal = await Journal.open(session.dir);
  const player = record.replay !== undefined ? await CassettePlayer.open(record.replay) : undefined;
  const recorder = record.record !== undefined ? await CassetteRecorder.open(record.record) : undefined;
  const pool = player ? undefined : createHttpPool();
  const base = itemRunBase(spec, record, outlets);
  const price = pricing(player ? undefined : await outlets.globalConfig(), player ? {} : outlets.env);
  const budget = await batchBudget(record, spec, price);
  const control = startBatch({
    id: record.id,
    spec,
    base,
    input: record.input,
    ...(record.keyField !== undefined ? { keyField: record.keyField } : {}),
    ...(record.prompt !== undefined ? { prompt: record.prompt } : {}),
    defaultMessage: outlets.defaultMessage,
    concurrency: record.concurrency,
    ...(record.maxFailures !== undefined ? { maxFailures: record.maxFailures } : {}),
    ...(budget ? { budget } : {}),
    // As `--json` prices a run: the tree at its models' prices, none when one of them has none.
    costOf: (result) => treeDollars(result, price)?.usd,
    journal,
    journaled: session.journaled,
    retryFailed: session.retryFailed,
    shared: { ...(pool ? { pool } : {}), ...(player ? { player } : {}), ...(recorder ? { recorder } : {}) },
    ...(record.recordRuns
      ? {
          records: itemRecords(record, { ...record, timeoutSeconds: base.timeoutSeconds }, outlets),
        }
      : {}),
    write: outlets.write,
    emit: outlets.emit,
    ...(outlets.onCounts ? { onCounts: outlets.onCounts } : {}),
    ...(outlets.trace ? { trace: outlets.trace } : {}),
  });
  const finished = (async () => {
    try {
      const summary = await control.done;
      let recordError: string | undefined;
      if (recorder && summary.stoppedBy === undefined && summary.counts.completed === summary.counts.total) {
        try {
          await recorder.publish();
        } catch (error) {
          recordError = `--record: could not write ${record.record} (${fsErrorReason(error)}): nothing recorded`;
        }
      }
      return { ...summary, ...(recordError ? { recordError } : {}) };
    } finally {
      await journal.close();
      await pool?.close();
    }
  })();
  return { control, finished };
}

/** What a batch asks of each item's run, beside its agent. */
export type ItemAsk = Pick<BatchRecord, 'model' | 'skill' | 'workdir' | 'timeoutSeconds' | 'rpm' | 'tpm'>;

/**
 * What every item of a batch runs with (its agent, flags, config), whichever process runs it: a
 * local batch's or a queue worker. One rate gate per provider for all of them: a 429 to one holds
 * every item back.
 */
export function itemRunBase(
  spec: AgentSpec,
  asked: ItemAsk,
  where: Pick<BatchOutlets, 'env' | 'searchDirs' | 'configDir' | 'globalConfig'>,
): ItemRunBase {
  return {
    spec,
    env: where.env,
    searchDirs: where.searchDirs,
    configDir: where.configDir,
    globalConfig: where.globalConfig,
    ...(asked.model !== undefined ? { modelOverride: asked.model } : {}),
    ...(asked.skill !== undefined ? { skillOverride: asked.skill } : {}),
    ...(asked.workdir !== undefined ? { workdirOverride: asked.workdir } : {}),
    timeoutSeconds: asked.timeoutSeconds ?? spec.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    // Each item's tree keeps the agent's own `[budget] max_tokens`; `--max-tokens` is the batch's.
    ...(spec.budget.maxTokens !== undefined ? { maxTokens: spec.budget.maxTokens } : {}),
    stream: false,
    rateGates: new RateGates({
      ...(asked.rpm !== undefined ? { rpm: asked.rpm } : {}),
      ...(asked.tpm !== undefined ? { tpm: asked.tpm } : {}),
    }),
  };
}

/**
 * Where each item's run is recorded and what its record says it was asked (linked to its batch by
 * the item's run), whichever process runs it.
 */
export function itemRecords(
  asked: ItemAsk,
  run: {
    agent: string;
    agentFile: string;
    cwd: string;
    agentsDirs: string[];
    timeoutSeconds: number;
    replay?: string;
  },
  where: Pick<BatchOutlets, 'env' | 'globalConfig'>,
): NonNullable<ItemRunner['records']> {
  return {
    globalConfig: where.globalConfig,
    env: where.env,
    runsDir: runsDir(where.env),
    request: {
      agent: run.agent,
      agentFile: run.agentFile,
      cwd: run.cwd,
      agentsDirs: run.agentsDirs,
      ...(asked.model !== undefined ? { model: asked.model } : {}),
      ...(asked.skill !== undefined ? { skill: asked.skill } : {}),
      ...(asked.workdir !== undefined ? { workdir: asked.workdir } : {}),
      timeoutSeconds: run.timeoutSeconds,
      stream: false,
      ...(run.replay !== undefined ? { replay: run.replay } : {}),
    },
  };
}

/**
 * The budget of the whole batch (`--max-tokens`, `--max-cost`), every item's calls reserving in
 * it; undefined without either. Under `--max-cost` the agent's model must have a price (the
 * table's or config.toml's `[prices]`), else the batch is refused before anything starts.
 */
async function batchBudget(record: BatchRecord, spec: AgentSpec, price: Pricer): Promise<Budget | undefined> {
  if (record.maxTokens === undefined && record.maxCostUsd === undefined) return undefined;
  if (record.maxCostUsd !== undefined) refuseUnpriced(spec, record.model, price);
  return new Budget({
    ...(record.maxTokens !== undefined ? { maxTokens: record.maxTokens } : {}),
    ...(record.maxCostUsd !== undefined ? { maxCostUsd: record.maxCostUsd } : {}),
  });
}

/** Under `--max-cost`: the agent's model (or `--model`) must have a price, else the batch is refused. */
export function refuseUnpriced(spec: AgentSpec, model: string | undefined, price: Pricer): void {
  const resolved = resolveModel(spec, { overrides: { ...(model !== undefined ? { model } : {}) } });
  if (price(resolved.provider, resolved.model) === undefined) {
    throw new UnpricedModelError(`${resolved.provider}/${resolved.model}`);
  }
}
