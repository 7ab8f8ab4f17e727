import { statSync } from 'node:fs';

/** Directories already warned about: one warning per process, however many parts of axe look. */
const warned = new Set<string>();

/**
 * The data directory (and its memory and runs) holds prompts, answers and lock files: axe creates
 * it 0700, but one that already exists keeps its mode. Writable by other users, another user
 * could plant a FIFO lock there (hanging the owner's runs) or a file axe then reads as its own.
 * The warning for the first of `dirs` that others may write, once per process; undefined else (or
 * for a directory that does not exist yet).
 */
export function sharedDirWarning(dirs: readonly string[]): string | undefined {
  for (const dir of dirs) {
    let mode: number;
    try {
      mode = statSync(dir).mode & 0o7777;
    } catch {
      continue;
    }
    if ((mode & 0o022) === 0 || warned.has(dir)) continue;
    warned.add(dir);
    const shown = mode.toString(8).padStart(4, '0');
    return `${dir} is writable by other users (mode ${shown}); another user could plant files there that axe trusts: chmod 700 ${dir}`;
  }
  return undefined;
}
