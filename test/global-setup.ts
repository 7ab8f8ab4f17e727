import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds dist/ before any test file runs: the end-to-end tests run the built `axe`, and after an
 * edit to a source file they would otherwise test the old build. Building (about a second) is
 * always right, where comparing times would miss a checkout that sets old times or a changed
 * dependency. It runs once in vitest's main process, before the workers start; the build swaps the
 * new dist/ in whole, so an `axe` still running from the old one is not disturbed.
 */
export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  try {
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString() ?? '';
    throw new Error(`the build before the tests failed (node scripts/build.mjs):\n${stderr}`);
  }
}
