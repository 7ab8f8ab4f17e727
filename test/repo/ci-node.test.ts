import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { tempDirForFile } from '../temp-dir.js';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/ci-node.sh', import.meta.url));

/** bash, found on this process's PATH: the script runs with an empty one. */
function bash(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    try {
      accessSync(join(dir, 'bash'), constants.X_OK);
      return join(dir, 'bash');
    } catch {}
  }
  throw new Error('no bash on PATH');
}

/** A cache holding this process's own node as `node-<version>`, as a fetch leaves it. */
function cacheWith(version: string): string {
  const cache = tempDirForFile('axe-ci-node-');
  mkdirSync(join(cache, 'axe-ci', `node-${version}`, 'bin'), { recursive: true });
  symlinkSync(process.execPath, join(cache, 'axe-ci', `node-${version}`, 'bin', 'node'));
  return cache;
}

describe('scripts/ci-node.sh', () => {
  it('reuses a cached Node of that version without fetching (no npm on PATH)', async () => {
    const version = process.versions.node;
    const cache = cacheWith(version);
    const { stdout } = await run(bash(), [SCRIPT, version], { env: { PATH: '', XDG_CACHE_HOME: cache } });
    expect(stdout).toBe(`${join(cache, 'axe-ci', `node-${version}`, 'bin')}\n`);
  });

  it('refuses a cached binary that is another version, in one line', async () => {
    const cache = cacheWith('1.2.3');
    const failure = await run(bash(), [SCRIPT, '1.2.3'], { env: { PATH: '', XDG_CACHE_HOME: cache } }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toBe(
      `scripts/ci-node.sh: ${join(cache, 'axe-ci', 'node-1.2.3', 'bin', 'node')} is ${process.version}, not v1.2.3\n`,
    );
  });
});
