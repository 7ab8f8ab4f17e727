import { constants } from 'node:fs';
import path from 'node:path';
import { fsPromises } from '../fs/promises.js';
import { syncDirectory } from '../fs/write-atomic.js';
import { createLimiter } from '../runner/limiter.js';
import {
  type AgentTreeManifest,
  checkManifest,
  StoredTreeError,
  sha256Hex,
  TREE_DIRS,
} from './tree-manifest.js';

/** A stored tree on a worker's disk: what an item's run uses instead of the enqueuing machine's files. */
export interface MaterializedTree {
  /** `<root>/<digest>`. */
  dir: string;
  /** The agent file the batch runs. */
  agentFile: string;
  /** Where its sub-agents are found (the stored ones only, then axe's built-in agents). */
  searchDirs: string[];
  /** Where its skills resolve. Only skills: the worker keeps its own config.toml (keys, providers, prices). */
  configDir: string;
  /** Stands for the directory the batch was queued from: the run's `cwd`, its relative workdirs below it. */
  workdir: string;
}

/**
 * Writes the tree of `manifest` under `root/<digest>/` (0700 directories, 0600 files), its files'
 * content from `readBlob` (each checked against its sha256), and returns where a run finds it.
 * The tree is written into a temp directory beside it, flushed, then renamed into place: a tree
 * directory is always whole, and two processes writing the same tree at once both end with it
 * (the second rename loses and its copy is removed). A tree already there is used as it is.
 */
export async function materializeTree(
  manifest: unknown,
  readBlob: (sha256: string) => Promise<Uint8Array>,
  root: string,
  options: { signal?: AbortSignal } = {},
): Promise<MaterializedTree> {
  const tree = checkManifest(manifest);
  const dir = path.join(root, tree.digest);
  await fsPromises().mkdir(root, { recursive: true, mode: 0o700 });
  if (await isTreeDir(dir)) return located(tree, dir);
  await placeWhole(dir, (temp) => writeTree(tree, readBlob, temp, options.signal));
  return located(tree, dir);
}

/**
 * A copy of the tree's `work/` at `dir`, for the items of one batch to run in: what their tools
 * write there stays out of the stored tree, which other batches of the same tree use as it was
 * queued. Copied through a temp directory and one rename, as the tree itself (0700 directories,
 * 0600 files); a copy already at `dir` is used as it is. Returns `dir`, the runs' `cwd`.
 */
export async function copyWorkdir(tree: MaterializedTree, dir: string): Promise<string> {
  await fsPromises().mkdir(path.dirname(dir), { recursive: true, mode: 0o700 });
  if (await isTreeDir(dir)) return dir;
  await placeWhole(dir, (temp) => copyInto(tree.workdir, temp));
  return dir;
}

/** Directories and regular files only: the stored tree holds nothing else. */
async function copyInto(from: string, into: string, limiter = createLimiter(WRITES_AT_ONCE)): Promise<void> {
  const fs = fsPromises();
  const entries = await fs.readdir(from, { withFileTypes: true });
  for (const entry of entries.filter((one) => one.isDirectory())) {
    await fs.mkdir(path.join(into, entry.name), { mode: 0o700 });
    await copyInto(path.join(from, entry.name), path.join(into, entry.name), limiter);
  }
  await settleAll(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) =>
        limiter.run(async () =>
          writeSynced(path.join(into, entry.name), await fs.readFile(path.join(from, entry.name))),
        ),
      ),
  );
}

/**
 * `fill`s a temp directory beside `dir` (0700), then renames it to `dir`: `dir` is whole or absent.
 * When another process placed its copy first, that one is kept and this one removed.
 */
async function placeWhole(dir: string, fill: (temp: string) => Promise<void>): Promise<void> {
  const fs = fsPromises();
  const parent = path.dirname(dir);
  const temp = await fs.mkdtemp(path.join(parent, `.${path.basename(dir).slice(0, 16)}-`));
  let placed = false;
  try {
    await fill(temp);
    try {
      await fs.rename(temp, dir);
      placed = true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || !(await isTreeDir(dir))) throw error;
    }
    await syncDirectory(parent);
  } finally {
    if (!placed) await fs.rm(temp, { recursive: true, force: true });
  }
}

function located(tree: AgentTreeManifest, dir: string): MaterializedTree {
  const agent = tree.files.find((file) => file.path.split('/')[0] === TREE_DIRS.agent) as { path: string };
  return {
    dir,
    agentFile: path.join(dir, ...agent.path.split('/')),
    searchDirs: [path.join(dir, TREE_DIRS.agents)],
    configDir: path.join(dir, TREE_DIRS.config),
    workdir: path.join(dir, TREE_DIRS.work),
  };
}

async function writeTree(
  tree: AgentTreeManifest,
  readBlob: (sha256: string) => Promise<Uint8Array>,
  into: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const fs = fsPromises();
  for (const top of Object.values(TREE_DIRS)) await fs.mkdir(path.join(into, top), { mode: 0o700 });
  for (const dir of tree.dirs) {
    await fs.mkdir(path.join(into, ...dir.split('/')), { recursive: true, mode: 0o700 });
  }
  // Each blob read once, however many paths hold it (Map.groupBy is Node 21's).
  const bySha = new Map<string, AgentTreeManifest['files']>();
  for (const file of tree.files) bySha.set(file.sha256, [...(bySha.get(file.sha256) ?? []), file]);
  const limiter = createLimiter(WRITES_AT_ONCE);
  await settleAll(
    [...bySha].map(([sha256, files]) =>
      limiter.run(async () => {
        signal?.throwIfAborted();
        const content = await readBlob(sha256);
        if (sha256Hex(content) !== sha256) {
          throw new StoredTreeError(
            `stored agent tree ${tree.digest}: the content of ${files[0]?.path} is not ${sha256}`,
          );
        }
        for (const file of files) {
          const target = path.join(into, ...file.path.split('/'));
          await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
          await writeSynced(target, content);
        }
      }, signal),
    ),
  );
}

/**
 * Files written (and flushed) at once: each flush waits on the disk, ~2 ms here, so a tree of 500
 * files took 1.5 s one at a time. Also the blobs read at once from the database.
 */
const WRITES_AT_ONCE = 8;

/** Every one settled (none still writing into a directory about to be removed), then the first failure thrown. */
async function settleAll(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/** A new file, flushed before the tree is renamed into place: a tree that is there is whole after a crash too. */
async function writeSynced(file: string, content: Uint8Array): Promise<void> {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const handle = await fsPromises().open(file, flags, 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** A directory of its own at `dir` (not a link someone planted), or nothing there. */
async function isTreeDir(dir: string): Promise<boolean> {
  const stats = await fsPromises()
    .lstat(dir)
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
  if (stats === undefined) return false;
  if (!stats.isDirectory()) throw new StoredTreeError(`${dir} is there but is not a directory: remove it`);
  return true;
}
