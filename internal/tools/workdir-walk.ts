import { join } from 'node:path';
import { fsPromises } from '../fs/promises.js';
import { readRegularFile } from '../fs/read-bounded.js';
import { type IgnoreRule, isIgnored, parseGitignore } from './gitignore.js';

/** A search never looks at more than this many directory entries (a workdir of `/`, a huge tree). */
const MAX_WALK_ENTRIES = 200_000;
/** A `.gitignore` larger than this is not read. */
const MAX_GITIGNORE_BYTES = 256 * 1024;

export interface WalkResult {
  /** Regular files, posix paths relative to the root, in sorted order. */
  files: string[];
  /** True when MAX_WALK_ENTRIES cut the walk short. */
  truncated: boolean;
}

/**
 * The regular files under `root` (a real path), as the search tools see them: `.git` and what the
 * `.gitignore` files say are skipped, symlinks are never followed (nor listed), nothing outside
 * `root` is visited.
 */
export async function walkWorkdir(root: string, signal: AbortSignal): Promise<WalkResult> {
  const files: string[] = [];
  let seen = 0;
  const visit = async (rel: string, inherited: readonly IgnoreRule[]): Promise<boolean> => {
    const dir = rel === '' ? root : join(root, rel);
    let entries: import('node:fs').Dirent[];
    try {
      entries = await fsPromises().readdir(dir, { withFileTypes: true });
    } catch {
      return true; // unreadable: skipped, as git skips it
    }
    const rules = [...inherited, ...(await gitignoreOf(dir, rel))];
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (signal.aborted) throw new Error('cancelled');
      if (++seen > MAX_WALK_ENTRIES) return false;
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        if (entry.name === '.git' || isIgnored(child, true, rules)) continue;
        if (!(await visit(child, rules))) return false;
      } else if (entry.isFile() && !isIgnored(child, false, rules)) files.push(child);
    }
    return true;
  };
  const complete = await visit('', []);
  return { files, truncated: !complete };
}

async function gitignoreOf(dir: string, rel: string): Promise<IgnoreRule[]> {
  try {
    // Bounded, regular files only: a FIFO or a huge file named .gitignore is not waited for.
    const bytes = await readRegularFile(join(dir, '.gitignore'), MAX_GITIGNORE_BYTES);
    return parseGitignore(bytes.toString('utf8'), rel);
  } catch {
    return [];
  }
}
