import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { resolvePaths } from '../config/paths.js';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { isPlainObject } from '../plain-object.js';
import { isRunId, newRunId } from '../record/run-id.js';
import type { MapFormat } from './input.js';

/** A batch's directory and files hold prompts and answers: the owner's only. */
const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;
const BATCH_JSON_MAX = 1024 * 1024;

/** What a batch was asked, as `batch.json` keeps it: all a resume needs to run the rest alike. */
export interface BatchRecord {
  version: 1;
  id: string;
  createdAt: string;
  /** The agent as named, and its file. */
  agent: string;
  agentFile: string;
  cwd: string;
  agentsDirs: string[];
  input: { file: string; format: MapFormat; digest: string; items: number; stdin?: boolean };
  keyField?: string;
  prompt?: string;
  /** `--system`: every item's system prompt, in place of the agent's. */
  system?: string;
  concurrency: number;
  timeoutSeconds?: number;
  /** `--max-tokens` / `--max-cost`: caps of the whole batch (every call of every item reserves in them). */
  maxTokens?: number;
  maxCostUsd?: number;
  maxFailures?: number;
  /** `--rpm` / `--tpm`: requests and tokens per minute, per provider, over every item. */
  rpm?: number;
  tpm?: number;
  model?: string;
  skill?: string;
  workdir?: string;
  out?: string;
  outFormat: 'jsonl' | 'csv';
  replay?: string;
  record?: string;
  recordRuns: boolean;
}

/** `<data dir>/batches`. */
export function batchesDir(env: NodeJS.ProcessEnv): string {
  return join(resolvePaths(env).dataDir, 'batches');
}

/** A new batch's directory (0700), with its id: ids sort by their start, as run ids do. */
export function createBatchDir(dir: string): { id: string; path: string } {
  try {
    mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  } catch (error) {
    throw new ConfigError(`batches: cannot create ${dir} (${fsErrorReason(error)})`);
  }
  for (let attempt = 0; ; attempt++) {
    const id = newRunId();
    try {
      mkdirSync(join(dir, id), { mode: DIR_MODE });
      return { id, path: join(dir, id) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 10) {
        throw new ConfigError(`batches: cannot create ${join(dir, id)} (${fsErrorReason(error)})`);
      }
    }
  }
}

export async function writeBatchRecord(dir: string, record: BatchRecord): Promise<void> {
  const file = join(dir, record.id, 'batch.json');
  try {
    await writeFileAtomic(file, `${JSON.stringify(record, null, 2)}\n`, { mode: FILE_MODE });
  } catch (error) {
    throw new ConfigError(`batches: cannot write ${file} (${fsErrorReason(error)})`);
  }
}

export async function readBatchRecord(dir: string, id: string): Promise<BatchRecord> {
  const file = join(dir, id, 'batch.json');
  let value: unknown;
  try {
    value = JSON.parse((await readRegularFile(file, BATCH_JSON_MAX)).toString('utf8'));
  } catch (error) {
    throw new ConfigError(`batch ${id}: cannot read ${file} (${fsErrorReason(error)})`);
  }
  if (!isPlainObject(value) || value.version !== 1 || value.id !== id || !isPlainObject(value.input)) {
    throw new ConfigError(`batch ${id}: ${file} is not a batch record`);
  }
  return value as unknown as BatchRecord;
}

/** The batch ids, newest first. */
export function batchIds(dir: string): string[] {
  try {
    return readdirSync(dir).filter(isRunId).sort().reverse();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ConfigError(`batches: cannot read ${dir} (${fsErrorReason(error)})`);
  }
}

/** `last`, a whole id, or a unique prefix → that id; else a ConfigError (exit 2). */
export function findBatch(dir: string, ref: string): string {
  return pickBatch(batchIds(dir), ref, dir);
}

/** The batch `ref` names among `ids` (newest first): an id, a unique prefix of one, or `last`. */
export function pickBatch(ids: readonly string[], ref: string, where: string): string {
  if (ref === '')
    throw new ConfigError('empty batch id: expected a batch id, a unique prefix of one, or last');
  if (ref === 'last') {
    const newest = ids[0];
    if (newest === undefined) throw new ConfigError(`no batches in ${where}`);
    return newest;
  }
  if (ids.includes(ref)) return ref;
  const matches = ids.filter((id) => id.startsWith(ref));
  if (matches.length === 1) return matches[0] as string;
  if (matches.length === 0) throw new ConfigError(`no batch matches "${ref}" (see axe batches list)`);
  throw new ConfigError(`"${ref}" matches ${matches.length} batches: ${matches.slice(0, 3).join(', ')}, …`);
}

export async function removeBatch(dir: string, id: string): Promise<void> {
  await fsPromises().rm(join(dir, id), { recursive: true, force: true });
}
