import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * A tmpfs of `size` (e.g. '64k') mounted at a fresh folder: a real full disk for tests. Needs
 * root; elsewhere it logs why and returns undefined, and the test skips its full-disk part.
 */
export function smallDisk(size: string): { root: string; unmount(): void } | undefined {
  if (process.getuid?.() !== 0) {
    console.warn('skipped: a full-disk test needs root to mount a small tmpfs');
    return undefined;
  }
  const root = mkdtempSync(path.join(os.tmpdir(), 'axe-full-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', root]);
  return {
    root,
    unmount: () => {
      execFileSync('umount', ['-l', root]);
      rmSync(root, { recursive: true, force: true });
    },
  };
}
