import { readdirSync, type Stats, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolvePaths } from '../config/paths.js';
import { readOwnFileSync, writeOwnFileSync } from '../fs/own-file.js';
import { removeStaleFiles } from '../fs/remove-stale.js';
import { hashName } from '../hash.js';
import type { JsonValue } from '../provider/types.js';

/**
 * A file changed this recently may change again within the same tick of its file system's clock
 * (2 s on FAT, 1 s on HFS+ and ext3, a few ms elsewhere) with the same times and size: it is read
 * afresh until it has been still this long.
 */
const SETTLE_MS = 2000;
const MAX_BYTES = 16 * 2 ** 20;

/** A file's state when its data was kept, then the data. */
type Entry = [state: string, data: JsonValue];

/**
 * The data of the agent files a listing found nothing to say about, kept under
 * `<cache dir>/agent-files/`, one file per set of search directories, with each file's state
 * (device, inode, size, modification and change times). The next listing takes an unchanged
 * file's data from here instead of reading and parsing it, then validates and resolves it as
 * usual, and inspects the file afresh should that find anything. An optimisation only: a missing,
 * foreign, damaged or other build's cache is ignored, one that cannot be written is not an error.
 */
export class AgentFileCache {
  /** The state of each file seen this listing whose data may be kept: unchanged, or settled. */
  readonly #states = new Map<string, string>();
  readonly #next = new Map<string, Entry>();

  private constructor(
    private readonly file: string,
    private readonly header: { build: string; dirs: string[] },
    private readonly kept: Map<string, Entry>,
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
      build = stateOf(statSync(fileURLToPath(import.meta.url)));
    } catch {
      return undefined;
    }
    const header = { build, dirs: searchDirs };
    return new AgentFileCache(file, header, readEntries(file, header));
  }

  /** The kept data of `path` when the file is as it was then; else undefined. */
  data(path: string): JsonValue | undefined {
    let stats: Stats;
    try {
      stats = statSync(path);
    } catch {
      return undefined;
    }
    const state = stateOf(stats);
    const entry = this.kept.get(path);
    const unchanged = entry?.[0] === state && stats.isFile();
    if (unchanged || Date.now() - Math.max(stats.mtimeMs, stats.ctimeMs) >= SETTLE_MS) {
      this.#states.set(path, state);
    }
    return unchanged ? entry[1] : undefined;
  }

  /** `path` was found clean, with this data: kept for the next listing (after `data(path)`). */
  keep(path: string, data: JsonValue): void {
    const state = this.#states.get(path);
    if (state !== undefined && survivesJson(data)) this.#next.set(path, [state, data]);
  }

  /** Writes what this listing kept, when it differs from what was read. */
  save(): void {
    const unchanged = ([path, [state, data]]: [string, Entry]) => {
      const kept = this.kept.get(path);
      return kept?.[0] === state && kept[1] === data;
    };
    if (this.#next.size === this.kept.size && [...this.#next].every(unchanged)) return;
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
      if (Array.isArray(entry) && entry.length === 2 && typeof entry[0] === 'string') {
        entries.set(path, entry as Entry);
      }
    }
  } catch {
    // None yet, or not usable: every file is read.
  }
  return entries;
}

/** JSON keeps every value of the data as it is (it turns -0 into 0). */
function survivesJson(value: JsonValue): boolean {
  if (typeof value === 'number') return !Object.is(value, -0);
  if (typeof value !== 'object' || value === null) return true;
  return (Array.isArray(value) ? value : Object.values(value)).every(survivesJson);
}
