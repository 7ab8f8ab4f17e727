import { closeSync, fstatSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { resolvePaths } from '../config/paths.js';
import { RuntimeError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { readAll } from '../fs/read-all.js';
import { removeFile } from '../fs/remove-stale.js';
import { hashName } from '../hash.js';
import { processAlive } from '../process-alive.js';
import { callBundle } from './bundle.js';
import { QUIET_MARK, readCacheFile, type SourceIdentity, saveCacheFile } from './code-cache-file.js';

/** A hash of the CLI's bundles, set by scripts/build.mjs. */
declare const AXE_CLI_ID: string;

/** This build on this Node: the caches of others are leftovers. */
const CACHE_PREFIX = `${AXE_CLI_ID}-${process.version}-${process.arch}-`;

/**
 * A run whose heap ends with this much more bytecode than the run that made the cache compiled
 * functions the cache lacks: the cache is made again, holding both.
 */
const GROWTH = 1.1;
/**
 * Asking V8 for the heap's bytecode costs 1–5 ms at exit (loading node:v8 loads Node's streams):
 * only in a cache's first day, and until this many runs in a row found nothing to add.
 */
const LEARNING_MS = 24 * 3600 * 1000;
const QUIET_RUNS = 3;

/**
 * Runs the CommonJS bundle `file` from V8's code cache: the functions a command compiled are kept
 * in `<cache dir>/code-cache/`, one file per `command` (bundle.ts), and later runs load them instead
 * of compiling the CLI's JavaScript again. The cache is written after a command's first successful
 * run, and during its first day again after a successful run that compiled notably more than the
 * cache held (a first fan-out after plain runs), so it grows to what the command is used for; once
 * three runs in a row found nothing to add (`<cache>.quiet-<n>` marks), it is kept as it is. It is
 * an optimisation only: a missing, foreign, stale or damaged one means compiling as usual, one that
 * cannot be written is not an error. `AXE_NO_CODE_CACHE=1` turns it off. Throws CannotStartError
 * when the bundle cannot be read or compiled.
 *
 * Used on every Node version. Node 20 has no compile cache of its own; Node 22.1+ has
 * `module.enableCompileCache()`, but it keeps what a module's loading compiled, not the functions
 * compiled later as the command runs, and it measured slower: `run --dry-run` took 60 ms over
 * `node -e 0` from this cache against 72 ms from Node's on 24.22, 64 against 120 ms on 22.23.
 */
export function runFromCodeCache(file: string, argv: string[], command: string): void {
  let source: { text: string; identity: SourceIdentity; bytes: Buffer };
  try {
    source = readSource(file);
  } catch (error) {
    throw cannotStart(file, fsErrorReason(error));
  }
  const cacheFile = cachePath(argv, command);
  const use = cacheFile !== undefined ? markUse(cacheFile) : undefined;
  // Into the bundle's bytes, decoded already: no fresh memory to fault in.
  const cached =
    use && cacheFile !== undefined ? readCacheFile(cacheFile, source.identity, source.bytes) : undefined;
  let script: Script;
  try {
    // The bundle is a function expression already (scripts/build.mjs): its text is compiled as
    // read, not copied into a wrapper first.
    script = new Script(source.text, {
      filename: file,
      cachedData: cached?.payload,
    });
  } catch (error) {
    // A cut or damaged cli.js.
    throw cannotStart(file, (error as Error).message.split('\n')[0] ?? 'cannot be compiled');
  }
  const usable = cached !== undefined && script.cachedDataRejected !== true;
  const quietRuns = use?.quietRuns ?? 0;
  const learning = usable && Date.now() - cached.madeAt < LEARNING_MS && quietRuns < QUIET_RUNS;
  if (cacheFile !== undefined && (!usable || learning)) {
    const held = usable ? cached.bytecode : 0;
    // At exit, so the cache holds every function the command compiled, not only the top level.
    process.once('exit', (code) => {
      if (code !== 0 || v8FlagsChanged()) return;
      // node:v8 only now: loading it costs 1–5 ms (more when no stream module is loaded yet).
      const bytecode = process.getBuiltinModule('node:v8').getHeapCodeStatistics().bytecode_and_metadata_size;
      if (!usable || bytecode > held * GROWTH) {
        saveCacheFile(cacheFile, script, source.identity, bytecode, CACHE_PREFIX);
      } else {
        markQuietRun(cacheFile, quietRuns + 1);
      }
    });
  }
  callBundle(script, file);
}

/**
 * The bundle's text, which file it is, and its bytes (free to reuse once decoded). esbuild writes
 * ASCII: latin1 skips the UTF-8 decode.
 */
function readSource(file: string): { text: string; identity: SourceIdentity; bytes: Buffer } {
  const fd = openSync(file, 'r');
  try {
    const { size, mtimeMs, ino } = fstatSync(fd);
    const data = readAll(fd, size);
    return { text: data.toString('latin1'), identity: { size: data.length, mtimeMs, ino }, bytes: data };
  } finally {
    closeSync(fd);
  }
}

/** The bundle cannot be read or compiled: thrown before any of it runs, never by the command itself. */
export class CannotStartError extends RuntimeError {}

function cannotStart(file: string, reason: string): CannotStartError {
  return new CannotStartError(`cannot start: ${file}: ${reason} (reinstall axe)`);
}

function cachePath(argv: string[], command: string): string | undefined {
  if (process.env.AXE_NO_CODE_CACHE === '1') return undefined;
  let dir: string;
  try {
    dir = join(resolvePaths(process.env).cacheDir, 'code-cache');
  } catch {
    return undefined;
  }
  // A dry run compiles a small part of what a run does.
  const name = command === 'run' && argv.includes('--dry-run') ? 'run-dry' : command;
  // V8 refuses a cache made under other flags: runs with other Node options keep their own.
  const flags = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].join(' ').trim();
  const ofFlags = flags === '' ? '' : `-${hashName(flags)}`;
  return join(dir, `${CACHE_PREFIX}${name}${ofFlags}.bin`);
}

/**
 * A damaged cache V8 takes would crash Node on every run. So a process marks the cache it uses
 * (`<cache>.<pid>.using`) until it exits; a mark left by a process that is gone means it never
 * exited — a crash, or a kill — and the cache is removed, to be made again. Undefined when there
 * is no cache to use, or it cannot be marked; else how many runs in a row found nothing to add to
 * it, from the same listing.
 */
function markUse(cacheFile: string): { quietRuns: number } | undefined {
  const dir = dirname(cacheFile);
  const base = basename(cacheFile);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  if (!names.includes(base)) return undefined;
  let quietRuns = 0;
  for (const name of names) {
    if (name.startsWith(`${base}${QUIET_MARK}`)) quietRuns++;
    if (!name.startsWith(`${base}.`) || !name.endsWith('.using')) continue;
    const pid = Number(name.slice(base.length + 1, -'.using'.length));
    if (pid === process.pid || processAlive(pid)) continue;
    removeFile(cacheFile);
    removeFile(join(dir, name));
    return undefined;
  }
  const mark = `${cacheFile}.${process.pid}.using`;
  try {
    writeFileSync(mark, '', { mode: 0o600 });
  } catch {
    return undefined;
  }
  process.once('exit', () => removeFile(mark));
  return { quietRuns };
}

/**
 * The `count`th run in a row that found nothing to add: an empty file whose name is the record.
 * Of two runs that count the same, the second finds it made.
 */
function markQuietRun(cacheFile: string, count: number): void {
  try {
    writeFileSync(`${cacheFile}${QUIET_MARK}${count}`, '', { mode: 0o600, flag: 'wx' });
  } catch {
    // Made by a concurrent run, or not writable: at worst one more check.
  }
}

/**
 * V8 refuses a cache made under other flags, and grep_files switches its linear regexp engine on
 * when it runs: a cache made then would be refused by every run that does not grep.
 */
function v8FlagsChanged(): boolean {
  try {
    // biome-ignore lint/complexity/useRegexLiterals: a literal with the `l` flag would not parse without it
    new RegExp('', 'l');
    return true;
  } catch {
    return false;
  }
}
