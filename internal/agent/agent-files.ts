/** Where agent files are: names, extensions, search directories. Reading them is load.ts's job. */
import { type Dirent, lstatSync, readdirSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { suggestion } from '../config/did-you-mean.js';
import { ConfigError } from '../errors.js';
import { builtinAgentsDir } from './builtin.js';

/** File extensions of agent files, in the order they win when one directory has several. */
const AGENT_EXTENSIONS = ['.toml', '.md', '.yaml', '.yml'] as const;

/** The agent's CLI name is its file's base name; these would escape the agents directory. */
export function checkAgentName(name: string): void {
  if (name.trim() === '' || /[/\\]/.test(name) || name.includes('..')) {
    throw new ConfigError(
      `invalid agent name "${name}": use the file's base name, without "/", "\\" or ".."`,
    );
  }
}

/**
 * The first `<dir>/<name>.<ext>` that exists, directories in order, then extensions in order;
 * axe's built-in agents (`explore`, `plan`) last, so a user's file of the same name wins. A name
 * that exists but is not a regular file (a directory, a FIFO, a dangling link) is returned too, so
 * that reading it says what it is instead of "not found".
 */
export async function findAgentFile(name: string, searchDirs: string[]): Promise<string | undefined> {
  checkAgentName(name);
  for (const dir of [...searchDirs, builtinAgentsDir()]) {
    for (const extension of AGENT_EXTENSIONS) {
      const file = join(dir, `${name}${extension}`);
      if (exists(file)) return file;
    }
  }
  return undefined;
}

/** A command line's agent that is a path to its file (`./agents/review.md`), not a name. */
export function isAgentPath(nameOrPath: string): boolean {
  return /[/\\]/.test(nameOrPath);
}

/**
 * The file a command line names: a path (`./agents/review.md`, anything with a `/`) as is, else
 * the agent of that name in the search directories. Not found: Go axe's words, plus where axe
 * looked and the nearest name.
 */
export async function locateAgent(nameOrPath: string, searchDirs: string[], cwd: string): Promise<string> {
  if (isAgentPath(nameOrPath)) {
    const file = resolve(cwd, nameOrPath);
    if (!hasAgentExtension(file)) {
      throw new ConfigError(`agent file ${nameOrPath}: expected a .toml, .md, .yaml or .yml file`);
    }
    if (!exists(file)) throw new ConfigError(`agent file not found: ${nameOrPath}`);
    return file;
  }
  const file = await findAgentFile(nameOrPath, searchDirs);
  if (file) return file;
  const names = (await agentFiles(searchDirs)).map((found) => found.name);
  throw new ConfigError(
    `agent config not found: ${nameOrPath} (looked in ${searchDirs.join(', ')})${suggestion(nameOrPath, names)}`,
  );
}

/**
 * Code-unit order, as Go axe's sort.Strings. Not localeCompare: its first call loads ICU collation
 * data, measured at ~15 ms of `axe agents list`'s startup.
 */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Every agent file of every search directory, sorted by name: the first one of each name wins. */
export async function agentFiles(
  searchDirs: string[],
): Promise<{ name: string; file: string; shadows: string[] }[]> {
  const byName = new Map<string, { name: string; file: string; shadows: string[] }>();
  for (const dir of searchDirs) {
    let entries: Dirent[];
    try {
      // Synchronous: a handful of directories, listed before anything runs (or to name the nearest
      // agent in a "not found" error), each a thread-pool round trip (~1 ms here) when awaited.
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    const files = entries
      .filter((entry) => isAgentFileName(entry.name))
      .map((entry) => entry.name)
      .sort((a, b) => extensionRank(a) - extensionRank(b));
    for (const fileName of files) {
      const name = basename(fileName, extname(fileName));
      const file = join(dir, fileName);
      const seen = byName.get(name);
      if (seen) seen.shadows.push(file);
      else byName.set(name, { name, file, shadows: [] });
    }
  }
  return [...byName.values()].sort((a, b) => compareCodeUnits(a.name, b.name));
}

/** A file name (or path) ending in one of AGENT_EXTENSIONS. */
export function hasAgentExtension(fileName: string): boolean {
  return extensionRank(fileName) !== -1;
}

function isAgentFileName(fileName: string): boolean {
  return hasAgentExtension(fileName) && !/^readme\.md$/i.test(fileName);
}

function extensionRank(fileName: string): number {
  return (AGENT_EXTENSIONS as readonly string[]).indexOf(extname(fileName));
}

/** Synchronous, as the listing above: a few names looked up before anything runs. */
function exists(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false;
  }
}
