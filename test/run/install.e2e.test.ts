import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { skipBecause } from '../skip.js';
import { AXE_BIN, REPO_ROOT } from './cli.js';

/**
 * The package as a user gets it: `npm pack` (the built dist/, as `npm publish` would pack it),
 * installed globally into a temporary prefix, then `axe` run from a directory that is not the
 * clone. The dependencies come from the npm cache that `npm ci` filled; when the cache lacks what
 * the install needs and the registry cannot be reached, the test says so and skips.
 */
const root = mkdtempSync(path.join(os.tmpdir(), 'axe-install-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** npm, bounded: a registry that never answers ends the install, not the suite. */
function npm(args: string[], cwd: string): { ok: boolean; output: string } {
  const result = spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    timeout: 240_000,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_fund: 'false' },
  });
  return {
    ok: result.status === 0,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}`,
  };
}

describe('the packed package', () => {
  it('installs globally from its tarball and runs from any directory', { timeout: 600_000 }, (context) => {
    expect(readdirSync(path.dirname(AXE_BIN))).toContain('main.js');
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(manifest).toMatchObject({ name: 'axe-agents', bin: { axe: 'dist/main.js' } });
    // --ignore-scripts: dist/ is built already (the suite runs it); `prepare` would rebuild it
    // under the other tests' feet.
    const packed = npm(['pack', '--ignore-scripts', '--pack-destination', root, '--silent'], REPO_ROOT);
    expect(packed.output).toMatch(/axe-agents-[\d.]+\.tgz/);
    const tarball = path.join(root, packed.output.trim().split('\n').at(-1) ?? '');
    const prefix = path.join(root, 'prefix');
    const install = (mode: string) =>
      npm(['install', '-g', '--prefix', prefix, tarball, mode, '--no-audit', '--ignore-scripts'], root);
    const offline = install('--offline');
    if (!offline.ok) {
      const online = install('--prefer-offline');
      if (!online.ok) {
        return skipBecause(
          context,
          `npm could not install the tarball's dependencies from its cache or the registry: ${online.output.split('\n').find((line) => line.includes('npm error')) ?? online.output.slice(0, 200)}`,
        );
      }
    }

    // Another directory, a clean environment: only the prefix's bin/ and the system's on PATH.
    const elsewhere = path.join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const env = {
      PATH: [path.join(prefix, 'bin'), path.dirname(process.execPath), '/usr/bin', '/bin'].join(
        path.delimiter,
      ),
      HOME: root,
      XDG_CONFIG_HOME: path.join(root, 'config'),
      XDG_DATA_HOME: path.join(root, 'data'),
      XDG_CACHE_HOME: path.join(root, 'cache'),
    };
    const axe = (args: string[], input?: string) =>
      spawnSync('axe', args, {
        cwd: elsewhere,
        env,
        encoding: 'utf8',
        timeout: 120_000,
        ...(input ? { input } : {}),
      });

    const version = axe(['version']);
    expect(version).toMatchObject({ status: 0, stdout: `axe version ${manifest.version}\n`, stderr: '' });
    const help = axe(['run', '--help']);
    expect(help.status).toBe(0);
    const installed = path.join(prefix, 'lib', 'node_modules', 'axe-agents');
    expect(help.stdout).toContain(`Docs:\n  ${path.join(installed, 'docs', 'run.md')}\n`);

    // The README's example, replayed from the installed package's own files.
    const examples = path.join(installed, 'agents', 'examples');
    const review = axe(
      [
        'run',
        'team-lead',
        '--agents-dir',
        examples,
        '--replay',
        path.join(examples, 'review.cassette.jsonl'),
      ],
      readFileSync(path.join(examples, 'sample.diff'), 'utf8'),
    );
    expect(review).toMatchObject({ status: 0, stderr: '' });
    expect(review.stdout).toContain('Verdict');
  });
});
