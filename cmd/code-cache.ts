import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { resolvePaths } from '../internal/config/paths.js';
import { replaceFileSync } from '../internal/fs/replace-file.js';

/** A hash of dist/cli.js, set by scripts/build.mjs: a cache is only ever used for the build that made it. */
declare const AXE_CLI_ID: string;

/** This build on this Node: every other cache in the directory is stale. */
const CACHE_PREFIX = `${AXE_CLI_ID}-${process.version}-${process.arch}-`;

/** The commands that get a cache of their own: each compiles a different part of the CLI. */
const COMMANDS = new Set(['run', 'agents', 'validate', 'runs', 'gc', 'config']);

/**
 * Runs the CommonJS bundle `file` from V8's code cache, as Node 22's `module.enableCompileCache`
 * does (Node 20 has none): the functions a command compiled are kept in `<cache dir>/code-cache/`,
 * one file per command, and later runs load them instead of compiling the CLI's JavaScript again.
 * The cache is written after a command's first successful run, and during its first day again
 * after a successful run that compiled notably more than the cache held (a first fan-out after
 * plain runs), so it grows to what the command is used for. The cache is an optimisation only: a missing, unreadable,
 * foreign or corrupt one (V8 checks its version, flags and source) means compiling as usual, and
 * one that cannot be written is not an error. `AXE_NO_CODE_CACHE=1` turns it off.
 */
export function runFromCodeCache(file: string, argv: string[]): void {
  // esbuild writes ASCII (non-ASCII characters escaped): latin1 skips the UTF-8 decode.
  const source = readFileSync(file, 'latin1');
  const cacheFile = cachePath(argv);
  const cached = cacheFile === undefined ? undefined : readCache(cacheFile);
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: file,
    cachedData: cached?.payload,
  });
  const usable = cached !== undefined && script.cachedDataRejected !== true;
  if (cacheFile !== undefined && (!usable || Date.now() - cached.madeAt < LEARNING_MS)) {
    const held = usable ? cached.bytecode : 0;
    // At exit, so the cache holds every function the command compiled, not only the top level.
    process.once('exit', (code) => {
      if (code !== 0 || v8FlagsChanged()) return;
      // node:v8 only now: loading it costs ~2 ms.
      const bytecode = process.getBuiltinModule('node:v8').getHeapCodeStatistics().bytecode_and_metadata_size;
      if (!usable || bytecode > held * GROWTH) saveCache(cacheFile, script, bytecode);
    });
  }
  const module = { exports: {} };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
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

function cachePath(argv: string[]): string | undefined {
  if (process.env.AXE_NO_CODE_CACHE === '1') return undefined;
  let dir: string;
  try {
    dir = join(resolvePaths(process.env).cacheDir, 'code-cache');
  } catch {
    return undefined;
  }
  const first = argv.find((arg) => !arg.startsWith('-')) ?? '';
  const command = COMMANDS.has(first) ? first : 'other';
  // A dry run compiles a small part of what a run does.
  const name = command === 'run' && argv.includes('--dry-run') ? 'run-dry' : command;
  return join(dir, `${CACHE_PREFIX}${name}.bin`);
}

/**
 * V8 checks a cache's version, flags and length, but in a release build not its content: a cache
 * with a damaged block inside would crash Node, on every run. So the file starts with a magic
 * number and a checksum, and a cache whose checksum does not match is not used.
 */
function readCache(file: string): { payload: Buffer; bytecode: number; madeAt: number } | undefined {
  let data: Buffer;
  try {
    data = readFileSync(file);
  } catch {
    return undefined;
  }
  if (data.length < HEADER || data.readUInt32LE(0) !== MAGIC) return undefined;
  const payload = data.subarray(HEADER);
  if (data.readUInt32LE(4) !== checksum(payload)) return undefined;
  return { payload, bytecode: data.readUInt32LE(8), madeAt: data.readUInt32LE(12) * 1000 };
}

// Header: magic, checksum, the heap's bytecode size when the cache was made, when (Unix seconds).
const MAGIC = 0x32435841; // "AXC2"
const HEADER = 16;
/**
 * A run whose heap ends with this much more bytecode than the run that made the cache compiled
 * functions the cache lacks: the cache is made again, holding both.
 */
const GROWTH = 1.1;
/** Asking V8 for the heap's bytecode costs 1–3 ms at exit: only in a cache's first day. */
const LEARNING_MS = 24 * 3600 * 1000;

/**
 * FNV-1a over the length and every 32nd 32-bit word (one in 128 bytes): hashing all of it in
 * JavaScript would cost more than the cache saves, and Node 20 has no crc32 without loading zlib
 * (~4 ms). A damaged disk block (512 bytes) spans four sampled words; a single flipped bit may not
 * be seen.
 */
function checksum(payload: Uint8Array): number {
  const words = new Uint32Array(payload.buffer, payload.byteOffset, payload.length >>> 2);
  let hash = (0x811c9dc5 ^ payload.length) >>> 0;
  for (let i = 0; i < words.length; i += 32) hash = Math.imul(hash ^ (words[i] ?? 0), 0x01000193) >>> 0;
  return hash;
}

/** Writes the command's cache and removes those of other builds and Node versions. Never throws. */
function saveCache(file: string, script: Script, bytecode: number): void {
  try {
    const dir = dirname(file);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const payload = script.createCachedData();
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(checksum(payload), 4);
    header.writeUInt32LE(bytecode, 8);
    header.writeUInt32LE(Math.floor(Date.now() / 1000), 12);
    replaceFileSync(file, Buffer.concat([header, payload]), 0o600);
    for (const name of readdirSync(dir)) {
      if (name.endsWith('.bin') && !name.startsWith(CACHE_PREFIX)) rmSync(join(dir, name), { force: true });
    }
  } catch {
    // Only an optimisation: the next run compiles as usual and tries again.
  }
}
