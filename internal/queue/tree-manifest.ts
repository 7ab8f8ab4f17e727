import { createHash } from 'node:crypto';
import { RuntimeError } from '../errors.js';
import { isPlainObject } from '../plain-object.js';

/**
 * The agent tree of a queued batch, as stored: which files a worker writes where, each by the
 * sha256 of its content (the content itself is a blob, stored once however many trees hold it).
 * Paths are relative to the tree's directory on the worker, `/`-separated:
 * - `agent/<file>`: the agent the batch runs (one file);
 * - `agents/<name>.<ext>`: its sub-agents, as the lookup by name found them (the worker's search dir);
 * - `config/…`: skills, relative to the config directory (where a worker resolves them);
 * - `work/…`: context files, relative to the directory `axe run` was started in.
 */
export interface AgentTreeManifest {
  version: 1;
  /** The name of the agent the batch runs. */
  agent: string;
  /** sha256 of the manifest's other fields (`treeDigest`): the tree's name, the same on every machine. */
  digest: string;
  /** Sorted by path, each path once. */
  files: TreeFile[];
  /** Working directories of the tree's agents (`work` and below), created even when they hold no file. */
  dirs: string[];
}

export interface TreeFile {
  path: string;
  sha256: string;
  role: 'agent' | 'skill' | 'context';
}

export const TREE_VERSION = 1;

/** The top folders of a stored tree. */
export const TREE_DIRS = { agent: 'agent', agents: 'agents', config: 'config', work: 'work' } as const;

/** A stored tree that a worker cannot use: a manifest or blob that is not what it says (exit 1). */
export class StoredTreeError extends RuntimeError {}

/** The sha256 (hex) of some bytes: a blob's name. */
export function sha256Hex(content: Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}

/**
 * The digest of a manifest: sha256 of its version, agent, files (sorted by path) and dirs (sorted)
 * as JSON. The worker keys its materialized trees by it; its `digest` field is not part of it.
 */
export function treeDigest(manifest: Omit<AgentTreeManifest, 'digest'>): string {
  const files = [...manifest.files]
    .sort((a, b) => compare(a.path, b.path))
    .map(({ path, sha256, role }) => ({ path, sha256, role }));
  const canonical = {
    version: manifest.version,
    agent: manifest.agent,
    files,
    dirs: [...manifest.dirs].sort(compare),
  };
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

/**
 * A manifest as read back from the database, checked before any of it touches the disk: the
 * shape, the digest, and paths that stay inside the tree's folders (no `..`, nothing absolute).
 */
export function checkManifest(value: unknown): AgentTreeManifest {
  const bad = (why: string): never => {
    throw new StoredTreeError(`stored agent tree: ${why}`);
  };
  if (!isPlainObject(value)) return bad('the manifest is not an object');
  const { version, agent, digest, files, dirs } = value as Record<string, unknown>;
  if (version !== TREE_VERSION) return bad(`version ${String(version)}, expected ${TREE_VERSION}`);
  if (typeof agent !== 'string' || agent === '') return bad('no agent name');
  if (typeof digest !== 'string' || !/^[0-9a-f]{64}$/.test(digest)) return bad('no sha256 digest');
  if (!Array.isArray(files) || !Array.isArray(dirs)) return bad('no files or dirs list');
  const seen = new Set<string>();
  const checked: TreeFile[] = files.map((file): TreeFile => {
    if (!isPlainObject(file)) return bad('a file entry is not an object');
    const { path, sha256, role } = file as Record<string, unknown>;
    if (typeof path !== 'string' || !safePath(path)) return bad(`unsafe path ${JSON.stringify(path)}`);
    if (seen.has(path)) return bad(`${path} is listed twice`);
    seen.add(path);
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256)) return bad(`${path}: no sha256`);
    if (role !== 'agent' && role !== 'skill' && role !== 'context') return bad(`${path}: unknown role`);
    return { path, sha256, role };
  });
  const agentFiles = checked.filter((file) => file.path.split('/')[0] === TREE_DIRS.agent);
  if (agentFiles.length !== 1) return bad(`expected one file under ${TREE_DIRS.agent}/`);
  for (const dir of dirs) {
    if (typeof dir !== 'string' || !(dir === TREE_DIRS.work || (safePath(dir) && dir.startsWith('work/')))) {
      return bad(`unsafe directory ${JSON.stringify(dir)}`);
    }
  }
  const manifest: AgentTreeManifest = {
    version: TREE_VERSION,
    agent,
    digest,
    files: checked,
    dirs: dirs as string[],
  };
  if (treeDigest(manifest) !== digest) return bad(`digest ${digest} does not match its content`);
  return manifest;
}

/** `<top>/<segment>/…` with a known top folder and plain segments only. */
function safePath(path: string): boolean {
  const segments = path.split('/');
  return (
    segments.length >= 2 &&
    (Object.values(TREE_DIRS) as string[]).includes(segments[0] as string) &&
    segments.every(
      (segment) => segment !== '' && segment !== '.' && segment !== '..' && !segment.includes('\0'),
    )
  );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
