import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { findAgentFile } from '../agent/agent-files.js';
import { loadAgentFile } from '../agent/load.js';
import { type AgentSpec, skillMayBeMissing } from '../agent/spec.js';
import { skillPath } from '../config/paths.js';
import { ConfigError } from '../errors.js';
import { fileProblem } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { formatBytes, readRegularFile } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import { readContextFiles, readSkill } from '../runner/prompt.js';
import {
  type AgentTreeManifest,
  sha256Hex,
  TREE_DIRS,
  TREE_VERSION,
  type TreeFile,
  treeDigest,
} from './tree-manifest.js';

export { copyWorkdir, materializeTree } from './materialize-tree.js';
export type { AgentTreeManifest, TreeFile } from './tree-manifest.js';
export { checkManifest, StoredTreeError, treeDigest } from './tree-manifest.js';

/**
 * The most one agent tree may hold in all, its files counted once each: the database keeps every
 * tree of every batch, and each worker writes it to its disk. Each file also keeps the limit a run
 * reads it with (READ_LIMITS: agent files 1 MiB, skills and context files 4 MiB, the context files
 * of one agent 16 MiB).
 */
export const TREE_LIMIT_BYTES = 64 * 2 ** 20;

export interface CollectOptions {
  /** The agent search directories, in lookup order, as the batch's run would use them. */
  searchDirs: string[];
  configDir: string;
  /** For `$VAR`s in sub-agent files, as they load here. */
  env: NodeJS.ProcessEnv;
  /** The directory `axe run` is started in: relative workdirs are relative to it. */
  cwd: string;
  /** `--skill` and `--workdir` of the batch (its top-level agent only). */
  skill?: string;
  workdir?: string;
}

export interface AgentTree {
  manifest: AgentTreeManifest;
  /** sha256 → content, each file once. */
  blobs: Map<string, Buffer>;
}

/**
 * Every file a run of `spec` reads from this machine, for a worker elsewhere to run it with: the
 * agent file, its sub-agents (found by name in `searchDirs` as a run finds them, and theirs, each
 * once), each agent's skill and context files (`files`, read as a run reads them, so with the
 * same limits and skips). What a run here would only find missing when it ran (a sub-agent that
 * is not there, a sub-agent's missing skill) stays missing in the tree, so the worker says the same.
 * Refused with a ConfigError (exit 2) naming the agent file and field: what a worker could not
 * have — a skill given by absolute path or outside the config directory, a relative workdir
 * outside `cwd`, `files` with an absolute workdir (the worker would read them from its own disk;
 * an absolute workdir without `files` is the worker's own directory) — and a tree larger than
 * TREE_LIMIT_BYTES.
 */
export async function collectTree(spec: AgentSpec, options: CollectOptions): Promise<AgentTree> {
  const collector = new TreeCollector(options);
  await collector.addAgentFile(spec.source, `${TREE_DIRS.agent}/${path.basename(spec.source)}`, spec.source);
  await collector.visit(spec, { top: true });
  return collector.tree(spec.name);
}

/** Where an agent runs: the workdir as the run will see it on the worker, and as it is here. */
interface Workdir {
  /** As given (relative or absolute), `.` when none. */
  value: string;
  /** The field or flag it came from, for messages. */
  label: string;
  /** Here: absolute, links resolved; undefined when it is not a directory. */
  real: string | undefined;
}

class TreeCollector {
  private readonly files = new Map<string, TreeFile>();
  private readonly blobs = new Map<string, Buffer>();
  private readonly dirs = new Set<string>([TREE_DIRS.work]);
  private readonly visited = new Set<string>();
  private bytes = 0;

  constructor(private readonly options: CollectOptions) {}

  tree(agent: string): AgentTree {
    const files = [...this.files.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    const body = { version: TREE_VERSION, agent, files, dirs: [...this.dirs].sort() } as const;
    return { manifest: { ...body, digest: treeDigest(body) }, blobs: this.blobs };
  }

  /**
   * One agent in one workdir, then its sub-agents. A sub-agent without a workdir of its own runs
   * in the process's directory (a TOML file's `call_agent`, any `delegate_task`) or in its caller's
   * (another format's `call_agent`, or any with `--workdir`): both are collected.
   */
  async visit(spec: AgentSpec, where: { top: true } | { top: false; workdir: Workdir }): Promise<void> {
    const { options } = this;
    const workdir = where.top
      ? this.workdir(
          options.workdir ?? spec.workdir,
          options.workdir !== undefined ? '--workdir' : `${spec.source}: workdir`,
        )
      : where.workdir;
    const key = `${spec.source}\0${workdir.value}`;
    if (this.visited.has(key)) return;
    this.visited.add(key);
    await this.addSkill(spec, where.top);
    if (path.isAbsolute(workdir.value)) {
      // A directory of the worker's machine, which may not exist here: only its context files are refused.
      if (spec.files.length > 0) {
        throw new ConfigError(
          `${spec.source}: files: context files under an absolute workdir (${workdir.value}) cannot be stored for a worker, which would read its own disk: give the workdir relative to ${options.cwd}`,
        );
      }
    } else if (workdir.real !== undefined) {
      await this.addContextFiles(spec, this.treeWorkdir(workdir), workdir.real, where.top);
    } else if (where.top) {
      throw new ConfigError(`${workdir.label}: not a directory: ${path.resolve(options.cwd, workdir.value)}`);
    }
    for (const name of new Set(spec.subAgents)) {
      const child = await this.addSubAgent(spec, name);
      if (child === undefined) continue;
      const workdirs =
        child.workdir !== undefined
          ? [this.workdir(child.workdir, `${child.source}: workdir`)]
          : [
              this.workdir(undefined, `${child.source}: workdir`),
              ...(child.format !== 'toml' || options.workdir !== undefined ? [workdir] : []),
            ];
      for (const childWorkdir of workdirs) await this.visit(child, { top: false, workdir: childWorkdir });
    }
  }

  async addAgentFile(file: string, treePath: string, label: string): Promise<void> {
    let content: Buffer;
    try {
      content = await readRegularFile(file, READ_LIMITS.agentFile);
    } catch (error) {
      throw new ConfigError(`${label}: ${fileProblem(file, error)}`);
    }
    this.add({ path: treePath, role: 'agent' }, content, label);
  }

  /**
   * A sub-agent's file, as the run's lookup finds it; its spec when it loads. One that does not
   * load is stored as it is, so that the worker's run fails on it in the same words.
   */
  private async addSubAgent(caller: AgentSpec, name: string): Promise<AgentSpec | undefined> {
    let file: string | undefined;
    try {
      file = await findAgentFile(name, this.options.searchDirs);
    } catch {
      return undefined; // a name no lookup accepts: the run refuses it the same way
    }
    if (file === undefined) return undefined;
    const treePath = `${TREE_DIRS.agents}/${path.basename(file)}`;
    if (!this.files.has(treePath)) {
      await this.addAgentFile(file, treePath, `${caller.source}: sub_agents: ${name}`);
    }
    try {
      return await loadAgentFile(file, this.options.env);
    } catch {
      return undefined;
    }
  }

  /** The skill as the run resolves it: the top-level agent's (or `--skill`) must be readable. */
  private async addSkill(spec: AgentSpec, top: boolean): Promise<void> {
    const flag = top ? this.options.skill : undefined;
    const skill = flag ?? spec.skill;
    if (skill === undefined || skill === '') return;
    const label = flag !== undefined ? '--skill' : spec.source;
    const field = flag !== undefined ? '--skill' : `${spec.source}: skill`;
    const { configDir } = this.options;
    if (path.isAbsolute(skill)) {
      throw new ConfigError(
        `${field}: "${skill}" is an absolute path, which a worker cannot have: give it relative to the config directory ${configDir}, or by name`,
      );
    }
    const file = skillPath(skill, configDir);
    const relative = path.relative(configDir, file);
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      throw new ConfigError(
        `${field}: "${skill}" is outside the config directory ${configDir}, which a worker cannot have`,
      );
    }
    // A Markdown agent's missing skill is a warning when it runs (resolve.ts): the worker says it too.
    const optional = skillMayBeMissing(spec, flag !== undefined);
    let content: string;
    try {
      if (optional) await fsPromises().access(file);
      content = await readSkill(skill, configDir, label);
    } catch (error) {
      if (top && !optional) throw error;
      return;
    }
    this.add(
      { path: `${TREE_DIRS.config}/${posix(relative)}`, role: 'skill' },
      Buffer.from(content, 'utf8'),
      field,
    );
  }

  /**
   * The files of `files` as the run reads them in `workdir`, stored under `work/` at their place
   * relative to `cwd`. Under a sub-agent, what the run would fail on only when called (no such
   * workdir, a file too large) is left out: the worker's run fails on it the same way.
   */
  private async addContextFiles(spec: AgentSpec, under: string, real: string, top: boolean): Promise<void> {
    let files: Awaited<ReturnType<typeof readContextFiles>>;
    try {
      files = await readContextFiles(spec.files, real, spec.source);
    } catch (error) {
      if (top) throw error;
      return;
    }
    const field = `${spec.source}: files`;
    for (const file of files) {
      this.add(
        { path: `${under}/${file.path}`, role: 'context' },
        Buffer.from(file.content, 'utf8'),
        `${field}: ${file.path}`,
      );
    }
  }

  /**
   * An agent's workdir: the value as the worker's run will resolve it (relative to the tree's
   * `work/`, or absolute: the worker's own directory), and the directory it is here.
   */
  private workdir(value: string | undefined, label: string): Workdir {
    const given = value ?? '.';
    let real: string | undefined;
    try {
      const resolved = realpathSync.native(path.resolve(this.options.cwd, given));
      if (statSync(resolved).isDirectory()) real = resolved;
    } catch {
      real = undefined;
    }
    return { value: given, label, real };
  }

  /**
   * `work/<relative path>` of a relative workdir that exists here, made on the worker even when no
   * file lands in it (its run needs the directory). One outside `cwd` would land outside the
   * tree's `work/`: refused.
   */
  private treeWorkdir(workdir: Workdir): string {
    const { cwd } = this.options;
    const relative = path.relative(cwd, path.resolve(cwd, workdir.value));
    if (relative.startsWith('..') || path.isAbsolute(relative)) {
      throw new ConfigError(
        `${workdir.label}: "${workdir.value}" is outside ${cwd}, the directory axe runs in, so a worker cannot have it: give a workdir inside it, or an absolute one`,
      );
    }
    const dir = relative === '' ? TREE_DIRS.work : `${TREE_DIRS.work}/${posix(relative)}`;
    this.dirs.add(dir);
    return dir;
  }

  private add(entry: Omit<TreeFile, 'sha256'>, content: Buffer, label: string): void {
    const sha256 = sha256Hex(content);
    const earlier = this.files.get(entry.path);
    if (earlier !== undefined) {
      if (earlier.sha256 === sha256) return;
      throw new ConfigError(
        `${label}: two different files would be stored as ${entry.path} (a link in a workdir?): a worker can have only one`,
      );
    }
    if (!this.blobs.has(sha256)) {
      this.bytes += content.length;
      if (this.bytes > TREE_LIMIT_BYTES) {
        throw new ConfigError(
          `${label}: the agent tree (agent files, skills and context files) is larger than ${formatBytes(TREE_LIMIT_BYTES)} in all, too large to store for workers`,
        );
      }
      this.blobs.set(sha256, content);
    }
    this.files.set(entry.path, { ...entry, sha256 });
  }
}

function posix(relative: string): string {
  return relative.split(path.sep).join('/');
}
