import { readdirSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { resolvePaths } from '../config/paths.js';
import { readOwnFileSync, writeOwnFileSync } from '../fs/own-file.js';
import { removeStaleFiles } from '../fs/remove-stale.js';
import { hashName } from '../hash.js';
import type { JsonValue } from '../provider/types.js';
import type { AgentSpec } from './spec.js';

/**
 * A file changed this recently may change again within the same tick of its file system's clock
 * (2 s on FAT, 1 s on HFS+ and ext3, a few ms elsewhere) with the same times and size: it is read
 * afresh until it has been still this long.
 */
const SETTLE_MS = 2000;
const MAX_BYTES = 16 * 2 ** 20;

/**
 * A file's state when it was kept, its data, and the agent it resolved to when resolving it read
 * no environment variable (else it is resolved again each time: the environment may change).
 */
type Entry = [state: string, data: JsonValue, spec?: AgentSpec];

/** What a listing kept of an unchanged file. */
export interface KeptFile {
  data: JsonValue;
  spec?: AgentSpec;
}

/**
 * The data of the agent files a listing found nothing to say about, kept under
 * `<cache dir>/agent-files/`, one file per set of search directories, with each file's state
 * (device, inode, size, modification and change times). The next listing takes an unchanged
 * file's agent from here, as resolved then, when that depended on nothing but the file and this
 * build; a file whose agent the environment shapes (`workdir = "~/src"`) has only its data taken
 * from here instead of being read and parsed, then validated and resolved as usual, and is
 * inspected afresh should that find anything. An optimisation only: a missing, foreign, damaged
 * or other build's cache is ignored, one that cannot be written is not an error.
 */
export class AgentFileCache {
  /** The state of each file seen this listing whose data may be kept: unchanged, or settled. */
  readonly #states = new Map<string, string>();
  readonly #next = new Map<string, Entry>();

  private constructor(
    private readonly file: string,
    private readonly header: { build: string; dirs: string[] },
    private readonly previous: Map<string, Entry>,
  ) {}

  /** The cache of this set of directories; undefined when there is no cache directory. */
  static open(searchDirs: string[], env: NodeJS.ProcessEnv): AgentFileCache | undefined {
    let file: string;
    let build: string;
    try {
      const name = hashName(JSON.stringify(searchDirs));
      file = join(resolvePaths(env).cacheDir, 'agent-files', `${name}.json`);
      // This build of axe (its bundle, or this module when run from source): another one may read
      // the same text into other data.
      build = stateOf(statSync(import.meta.filename));
    } catch {
      return undefined;
    }
    const header = { build, dirs: searchDirs };
    return new AgentFileCache(file, header, readEntries(file, header));
  }

  /**
   * What was kept of `path` when the file is as it was then; else undefined. A kept agent is kept
   * again as it is: nothing will be found in it.
   */
  kept(path: string): KeptFile | undefined {
    let stats: Stats;
    try {
      stats = statSync(path);
    } catch {
      return undefined;
    }
    const state = stateOf(stats);
    const entry = this.previous.get(path);
    const unchanged = entry?.[0] === state && stats.isFile();
    if (unchanged || Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) >= SETTLE_MS) {
      this.#states.set(path, state);
    }
    if (!unchanged) return undefined;
    if (entry[2] === undefined) return { data: entry[1] };
    this.#next.set(path, entry);
    return { data: entry[1], spec: entry[2] };
  }

  /**
   * `path` was found clean, with this data and, when resolving it read no environment variable,
   * this agent: kept for the next listing (after `kept(path)` found no agent).
   */
  keep(path: string, kept: KeptFile): void {
    const state = this.#states.get(path);
    if (state === undefined || !survivesJson(kept.data)) return;
    const spec = kept.spec !== undefined && survivesJson(kept.spec) ? kept.spec : undefined;
    this.#next.set(path, spec === undefined ? [state, kept.data] : [state, kept.data, spec]);
  }

  /** Writes what this listing kept, when it differs from what was read. */
  save(): void {
    const unchanged = ([path, [state, data, spec]]: [string, Entry]) => {
      const kept = this.previous.get(path);
      return kept?.[0] === state && kept[1] === data && kept[2] === spec;
    };
    if (this.#next.size === this.previous.size && [...this.#next].every(unchanged)) return;
    const dir = dirname(this.file);
    try {
      const text = JSON.stringify({ ...this.header, files: Object.fromEntries(this.#next) });
      writeOwnFileSync(this.file, text);
      removeStaleFiles(
        dir,
        readdirSync(dir).filter((name) => name !== basename(this.file)),
      );
    } catch {
      // The next listing reads the files again.
    }
  }
}

function stateOf(stats: Stats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

function readEntries(file: string, header: { build: string; dirs: string[] }): Map<string, Entry> {
  const entries = new Map<string, Entry>();
  try {
    const read = JSON.parse(readOwnFileSync(file, { maxBytes: MAX_BYTES }).toString('utf8')) as {
      build?: unknown;
      dirs?: unknown;
      files?: unknown;
    };
    if (read.build !== header.build || JSON.stringify(read.dirs) !== JSON.stringify(header.dirs))
      return entries;
    if (typeof read.files !== 'object' || read.files === null) return entries;
    for (const [path, entry] of Object.entries(read.files)) {
      const spec: unknown = entry?.[2];
      if (
        Array.isArray(entry) &&
        (entry.length === 2 || (entry.length === 3 && typeof spec === 'object' && spec !== null)) &&
        typeof entry[0] === 'string'
      ) {
        entries.set(path, entry as Entry);
      }
    }
  } catch {
    // None yet, or not usable: every file is read.
  }
  return entries;
}

/**
 * JSON gives back every value as it is: no -0 (it turns into 0), no undefined (its key goes), and
 * nothing but plain objects, arrays, strings, finite numbers, booleans and null.
 */
function survivesJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      if (Array.isArray(value)) return value.every(survivesJson);
      const prototype: unknown = Object.getPrototypeOf(value);
      return (
        (prototype === Object.prototype || prototype === null) && Object.values(value).every(survivesJson)
      );
    }
    default:
      return false;
  }
}
