import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm run mutation` is not part of the suite (it builds and tests a copy per mutant), but each of
 * its mutants is a snippet that must stand once in the sources: a refactor that moves or rewords
 * one would leave the script unable to break that behaviour. This keeps them found.
 */
describe('the mutation check', () => {
  it('finds every mutant snippet exactly once in cmd/ and internal/', async () => {
    const { stdout } = await run(process.execPath, ['scripts/mutation.mjs', '--check'], { cwd: ROOT });
    expect(stdout).toMatch(/^mutation: all \d+ snippets found once$/m);
  });
});
