import { statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';

/** A cache of another build, Node or set of inputs goes when not rewritten for this long. */
const KEPT_MS = 7 * 24 * 3600 * 1000;
/** A temp file this old is a write that was killed before its rename. */
const TEMP_KEPT_MS = 3600 * 1000;

/** unlink, whatever it finds: not rmSync, whose first call loads Node's rimraf (~1 ms). */
export function removeFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or not ours to remove: the next run sees it and decides again.
  }
}

/**
 * Of `names` in the cache directory `dir` (the ones no longer in use), removes those not written
 * for a week, and temp files (`.tmp`) of writes killed before their rename after an hour.
 */
export function removeStaleFiles(dir: string, names: readonly string[]): void {
  const now = Date.now();
  for (const name of names) {
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > (name.endsWith('.tmp') ? TEMP_KEPT_MS : KEPT_MS)) removeFile(path);
    } catch {
      // Gone already.
    }
  }
}
