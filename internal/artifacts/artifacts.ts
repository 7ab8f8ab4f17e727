import { isAbsolute, join, resolve } from 'node:path';
import { expandPath } from '../agent/expand.js';
import type { AgentSpec } from '../agent/spec.js';
import { resolvePaths } from '../config/paths.js';
import { ConfigError, errorMessage, RuntimeError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';

/** One file written into the run's artifact directory, as `--json` lists it. */
export interface ArtifactEntry {
  /** Relative to the artifact directory. */
  path: string;
  agent: string;
  size: number;
}

/**
 * The files written into the run's artifact directory (the top-level agent's) by any agent of the
 * tree — a sub-agent shares it with `dir = "${AXE_ARTIFACT_DIR}"`. A file written twice is listed
 * once, with its last writer and size.
 */
export class ArtifactManifest {
  /** The run's artifact directory once the top-level agent has opened one. */
  dir: string | undefined;
  readonly #entries = new Map<string, ArtifactEntry>();

  record(entry: ArtifactEntry): void {
    this.#entries.delete(entry.path);
    this.#entries.set(entry.path, entry);
  }

  list(): ArtifactEntry[] {
    return [...this.#entries.values()];
  }
}

/** An agent's open artifact directory. */
export interface OpenArtifactDir {
  /** Absolute, real path. */
  dir: string;
  /** Made for this run under `<cache>/artifacts/` (removed at the end unless kept). */
  auto: boolean;
}

/**
 * Go axe's resolution (specs 042/044): `--artifact-dir` (top-level agent only; turns artifacts on)
 * > `[artifacts] dir` with `enabled` > a fresh `<cache>/artifacts/<YYYYMMDDTHHMMSS>-<6 hex>` when
 * only `enabled`; none → off. `~` and `$VAR` are expanded and a relative directory is taken from
 * the agent's workdir. The directory is created (with its parents) before the first model call.
 */
export async function openArtifactDir(
  spec: AgentSpec,
  options: { flagDir: string | undefined; workdir: string; env: NodeJS.ProcessEnv },
): Promise<OpenArtifactDir | undefined> {
  const { flagDir, workdir, env } = options;
  if (flagDir !== undefined && flagDir !== '') {
    return { dir: await createDir(fromWorkdir(expandFlag(flagDir, env), workdir)), auto: false };
  }
  if (!spec.artifacts.enabled) return undefined;
  if (spec.artifacts.dir !== undefined && spec.artifacts.dir !== '') {
    return { dir: await createDir(fromWorkdir(spec.artifacts.dir, workdir)), auto: false };
  }
  const parent = join(resolvePaths(env).cacheDir, 'artifacts');
  return { dir: await createAutoDir(parent), auto: true };
}

/**
 * The end of an agent's artifact directory: an auto-generated one is removed — on success, error
 * and Ctrl-C alike — unless `keep`; a failed removal is a warning, never a failed run.
 */
export async function closeArtifactDir(
  opened: OpenArtifactDir,
  keep: boolean,
  say: (line: { notice: string } | { warning: string }) => void,
): Promise<void> {
  if (!opened.auto) return;
  if (keep) {
    say({ notice: `artifacts preserved: ${opened.dir}` });
    return;
  }
  try {
    await fsPromises().rm(opened.dir, { recursive: true, force: true, maxRetries: 2 });
  } catch (error) {
    say({
      warning: `failed to clean up artifact directory ${JSON.stringify(opened.dir)}: ${errorMessage(error)}`,
    });
  }
}

function expandFlag(text: string, env: NodeJS.ProcessEnv): string {
  const { value, unset } = expandPath(text, env);
  if (unset.length > 0)
    throw new ConfigError(`--artifact-dir: $${unset[0]} is not set (in ${JSON.stringify(text)})`);
  return value;
}

function fromWorkdir(dir: string, workdir: string): string {
  return isAbsolute(dir) ? dir : resolve(workdir, dir);
}

/** Go's wording and exit code (a RuntimeError, exit 1) for a directory that cannot be made. */
async function createDir(dir: string): Promise<string> {
  try {
    await fsPromises().mkdir(dir, { recursive: true, mode: 0o700 });
    return await fsPromises().realpath(dir);
  } catch (error) {
    throw new RuntimeError(`failed to create artifact directory: ${dir}: ${fsErrorReason(error)}`);
  }
}

/** A new directory no other run shares: the leaf is created exclusively (a clash draws again). */
async function createAutoDir(parent: string): Promise<string> {
  await createDir(parent);
  for (let attempt = 0; ; attempt++) {
    const dir = join(parent, `${timestamp(new Date())}-${randomHex(3)}`);
    try {
      await fsPromises().mkdir(dir, { mode: 0o700 });
      return await fsPromises().realpath(dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 5) continue;
      throw new RuntimeError(`failed to create artifact directory: ${dir}: ${fsErrorReason(error)}`);
    }
  }
}

/** Go's `20060102T150405` layout, local time. */
function timestamp(date: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}${two(date.getMonth() + 1)}${two(date.getDate())}` +
    `T${two(date.getHours())}${two(date.getMinutes())}${two(date.getSeconds())}`
  );
}

function randomHex(bytes: number): string {
  return Buffer.from(globalThis.crypto.getRandomValues(new Uint8Array(bytes))).toString('hex');
}
