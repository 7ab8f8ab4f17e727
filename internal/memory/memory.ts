import { dirname, join } from 'node:path';
import type { MemoryConfig } from '../agent/spec.js';
import { resolvePaths } from '../config/paths.js';
import { errorMessage } from '../errors.js';
import { fileProblem } from '../fs/fs-error.js';
import { openAppendable } from '../fs/open-writable.js';
import { sharedDirWarning } from '../fs/private-dir.js';
import { fsPromises } from '../fs/promises.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { isoTime } from '../time.js';
import { withFileLock } from './file-lock.js';

/**
 * Go axe's memory: a Markdown log per agent, one entry per successful run,
 *
 *     ## 2026-11-24T10:00:00Z
 *     **Task:** <the user message, newlines as spaces>
 *     **Result:** <the answer, cut at 1000 bytes + "...">
 *
 * whose newest `last_n` entries go into the agent's system prompt. Appends and trims take the
 * file's lock, so concurrent runs and a trim never lose an entry.
 */
const RESULT_MAX_BYTES = 1000;

/** `[memory] path`, else `<data dir>/memory/<agent>.md` (Go's rule). */
export function memoryFile(agent: string, config: MemoryConfig, env: NodeJS.ProcessEnv): string {
  return config.path ?? join(resolvePaths(env).dataDir, 'memory', `${agent}.md`);
}

/** The whole log; empty when there is none yet. */
export async function readMemory(file: string): Promise<string> {
  try {
    return (await readRegularFile(file, READ_LIMITS.memory)).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** Line indexes where entries start (`## ` lines). */
function entryStarts(lines: string[]): number[] {
  const starts: number[] = [];
  lines.forEach((line, index) => {
    if (line.startsWith('## ')) starts.push(index);
  });
  return starts;
}

/** Pure: the newest `lastN` entries as they are in the file (0 = the whole file), or ''. */
export function newestEntries(log: string, lastN: number): string {
  if (log === '' || lastN === 0) return log;
  const lines = log.split(/(?<=\n)/);
  const starts = entryStarts(lines);
  if (starts.length === 0) return '';
  return lines.slice(starts[Math.max(starts.length - lastN, 0)]).join('');
}

export function countEntries(log: string): number {
  return entryStarts(log.split('\n')).length;
}

/** Pure: one entry, byte for byte as Go axe writes it. */
export function formatEntry(time: Date, task: string, result: string): Buffer {
  const stamp = isoTime(time).replace(/\.\d{3}Z$/, 'Z');
  const shownTask = task === '' ? '(none)' : task.replaceAll('\n', ' ');
  const bytes = Buffer.from(result, 'utf8');
  const shownResult =
    result === ''
      ? Buffer.from('(none)')
      : bytes.length > RESULT_MAX_BYTES
        ? Buffer.concat([bytes.subarray(0, RESULT_MAX_BYTES), Buffer.from('...')])
        : bytes;
  return Buffer.concat([
    Buffer.from(`## ${stamp}\n**Task:** ${shownTask}\n**Result:** `),
    shownResult,
    Buffer.from('\n\n'),
  ]);
}

/**
 * Appends one entry, creating the file (and its directory) when needed; a failed append leaves
 * the log as it was. Waiting for another writer ends when `signal` aborts.
 */
export async function appendEntry(file: string, entry: Buffer, signal?: AbortSignal): Promise<void> {
  await appendLocked(file, entry, signal).catch((error: unknown) => {
    // The file system's errors in words naming the log; the others (a cancelled wait) as they are.
    const problem = fileProblem(file, error);
    throw problem === errorMessage(error) ? error : new Error(problem, { cause: error });
  });
}

async function appendLocked(file: string, entry: Buffer, signal?: AbortSignal): Promise<void> {
  // Owner-only, whatever the umask: the log holds the user's tasks and the model's answers.
  await fsPromises().mkdir(dirname(file), { recursive: true, mode: 0o700 });
  await withFileLock(
    file,
    async () => {
      const handle = await openAppendable(file, 0o600);
      try {
        const { size } = await handle.stat();
        try {
          await handle.writeFile(entry);
          await handle.sync();
        } catch (error) {
          // A cut entry (full disk) would glue the next one to it mid-line: the log ends where it did.
          await handle.truncate(size).catch(() => {});
          throw error;
        }
      } finally {
        await handle.close();
      }
    },
    signal,
  );
}

/**
 * Keeps the newest `keep` entries (0 = all), replacing the file atomically with its mode kept.
 * Returns how many entries it removed.
 */
export async function trimEntries(file: string, keep: number): Promise<number> {
  if (keep === 0) return 0;
  return withFileLock(file, async () => {
    const log = await readMemory(file);
    const total = countEntries(log);
    if (total <= keep) return 0;
    // A symlinked log is replaced where it really is: the link stays a link.
    const target = await fsPromises()
      .realpath(file)
      .catch(() => file);
    await writeFileAtomic(target, newestEntries(log, keep));
    return total - keep;
  });
}

export interface LoadedMemory {
  file: string;
  /** What goes into the system prompt ('' = nothing). */
  entries: string;
  /** Entries in the whole log (0 when there is no file). */
  count: number;
  /** Go's warnings, word for word (without the `Warning: ` prefix). */
  warnings: string[];
}

/** An agent's memory before its run: the newest entries, and a warning when the log is too long. */
export async function loadMemory(
  agent: string,
  config: MemoryConfig,
  env: NodeJS.ProcessEnv,
): Promise<LoadedMemory> {
  let file = '';
  try {
    file = memoryFile(agent, config, env);
    const log = await readMemory(file);
    const count = countEntries(log);
    const warnings =
      config.maxEntries > 0 && count >= config.maxEntries
        ? [
            `agent "${agent}" memory has ${count} entries (max_entries: ${config.maxEntries}). Run 'axe gc ${agent}' to trim.`,
          ]
        : [];
    const shared =
      config.path === undefined ? sharedDirWarning([dirname(dirname(file)), dirname(file)]) : undefined;
    if (shared !== undefined) warnings.push(shared);
    return { file, entries: newestEntries(log, config.lastN), count, warnings };
  } catch (error) {
    return {
      file,
      entries: '',
      count: 0,
      warnings: [`failed to load memory for "${agent}": ${fileProblem(file, error)}`],
    };
  }
}

/** The system prompt with the memory section Go axe appends. */
export function withMemory(systemPrompt: string, entries: string): string {
  return entries === '' ? systemPrompt : `${systemPrompt}\n\n---\n\n## Memory\n\n${entries}`;
}
