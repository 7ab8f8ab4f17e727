import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AXE_BIN } from '../run/cli.js';
import { skipBecause } from '../skip.js';
import { axe, tempHome } from './run-axe.js';

/**
 * Files that are not what they seem — FIFOs, devices, directories, dangling links, huge or deeply
 * nested files — are config errors naming the path; they never hang axe or break the listing.
 */
function withAgents(files: Record<string, string>) {
  const setup = tempHome();
  const agentsDir = join(setup.configDir, 'agents');
  mkdirSync(agentsDir, { recursive: true });
  for (const [name, content] of Object.entries(files)) writeFileSync(join(agentsDir, name), content);
  return { ...setup, agentsDir };
}

/** Running axe as another user needs root, to give the child that user's uid. */
const NOT_ROOT = 'runs axe as another user (uid 12345), which needs root';

/**
 * The built axe copied where any user can read it: the clone may sit in a folder other users
 * cannot enter (a 0700 home), and uid 12345 could not run its dist/ then. These commands need no
 * package from node_modules.
 */
let forAnyone: string | undefined;
function axeForAnyone(): string {
  if (forAnyone === undefined) {
    const dir = mkdtempSync(join(os.tmpdir(), 'axe-dist-'));
    chmodSync(dir, 0o755);
    cpSync(dirname(AXE_BIN), join(dir, 'dist'), { recursive: true });
    forAnyone = join(dir, 'dist', 'main.js');
  }
  return forAnyone;
}
afterAll(() => {
  if (forAnyone !== undefined) rmSync(dirname(dirname(forAnyone)), { recursive: true, force: true });
});

const OK_AGENT = 'name = "ok"\ndescription = "fine"\nmodel = "anthropic/claude-test"\n';
const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('hostile agent and config files', () => {
  it('a FIFO, a directory, a dangling link and a 5000-deep key: named as such; the others still listed', () => {
    const { cwd, env, agentsDir } = withAgents({
      'ok.toml': OK_AGENT,
      'deep.toml': `name = "deep"\nmodel = "a/b"\n${Array(5000).fill('a').join('.')} = 1\n`,
      'deepy.yaml': `name: x\nmodel: a/b\nk: ${'['.repeat(20_000)}${']'.repeat(20_000)}\n`,
    });
    execFileSync('mkfifo', [join(agentsDir, 'fifo.toml')]);
    mkdirSync(join(agentsDir, 'dir.toml'));
    symlinkSync(join(agentsDir, 'missing.toml'), join(agentsDir, 'dangling.toml'));

    const listed = axe(['agents', 'list'], { cwd, env });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe('ok - fine\n');
    expect(lines(listed.stderr).sort()).toEqual([
      `Warning: skipped ${join(agentsDir, 'dangling.toml')}: is a symbolic link to a missing file`,
      `Warning: skipped ${join(agentsDir, 'deep.toml')}: failed to parse agent config "deep": nested deeper than 64 levels`,
      expect.stringMatching(/deepy\.yaml:3:\d+: invalid YAML: nested too deeply to parse$/),
      `Warning: skipped ${join(agentsDir, 'dir.toml')}: is a directory, not a regular file`,
      `Warning: skipped ${join(agentsDir, 'fifo.toml')}: is a FIFO, not a regular file`,
    ]);

    const validated = axe(['validate'], { cwd, env });
    expect(validated.code).toBe(2);
    expect(validated.stdout).toContain('fifo.toml: is a FIFO, not a regular file');

    for (const name of ['fifo', 'dir', 'dangling']) {
      const run = axe(['run', name, '--dry-run'], { cwd, env });
      expect(run.code).toBe(2);
      expect(lines(run.stderr)).toHaveLength(1);
      expect(run.stderr).toContain(`${name}.toml: `);
    }
  });

  it('a FIFO or device as config.toml or --skill, a huge context file: exit 2 naming it; a FIFO matched by files is skipped', () => {
    const { cwd, env, agentsDir, configDir } = withAgents({});
    writeFileSync(join(agentsDir, 'ok.toml'), `${OK_AGENT}files = ["ctx/*"]\nworkdir = "${cwd}"\n`);
    mkdirSync(join(cwd, 'ctx'));
    writeFileSync(join(cwd, 'ctx', 'a.txt'), 'context a');
    execFileSync('mkfifo', [join(cwd, 'ctx', 'pipe')]);
    const dry = axe(['run', 'ok', '--dry-run'], { cwd, env });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('ctx/a.txt');
    expect(dry.stdout).not.toContain('ctx/pipe');

    const fifoSkill = join(cwd, 'skill-fifo');
    execFileSync('mkfifo', [fifoSkill]);
    const skills: [string, string][] = [
      [fifoSkill, 'is a FIFO, not a regular file'],
      ['/dev/zero', 'is a character device, not a regular file'],
    ];
    for (const [skill, reason] of skills) {
      const run = axe(['run', 'ok', '--dry-run', '--skill', skill], { cwd, env });
      expect({ code: run.code, stderr: run.stderr }).toEqual({
        code: 2,
        stderr: `axe: --skill: skill "${skill}" ${reason}: ${skill}\n`,
      });
    }

    writeFileSync(join(cwd, 'ctx', 'huge.txt'), Buffer.alloc(5 * 2 ** 20, 'x'));
    const huge = axe(['run', 'ok', '--dry-run'], { cwd, env });
    expect(huge.code).toBe(2);
    expect(huge.stderr).toMatch(/files: ctx\/huge\.txt is larger than 4 MiB\n$/);

    execFileSync('mkfifo', [join(configDir, 'config.toml')]);
    const config = axe(['run', 'ok', '-p', 'x'], { cwd, env });
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/config\.toml: is a FIFO, not a regular file\n$/);
  });
});

describe('agents init and config init', () => {
  it('a 300-character name, a parent that is a file, an unwritable dir: one line, exit 2', () => {
    const { cwd, env, home } = tempHome();
    const long = axe(['agents', 'init', 'x'.repeat(300)], { cwd, env });
    expect(long.code).toBe(2);
    expect(long.stderr).toMatch(/^axe: agents init: cannot create \S+: file name too long\n$/);

    writeFileSync(join(home, 'blocker'), '');
    const blocked = { ...env, XDG_CONFIG_HOME: join(home, 'blocker') };
    for (const args of [
      ['agents', 'init', 'a'],
      ['config', 'init'],
    ]) {
      const result = axe(args, { cwd, env: blocked });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/cannot create \S+: a part of the path is not a directory\n$/);
    }
  });

  it('an XDG dir that is not writable (as another user): exit 2, permission denied', (context) => {
    if (process.getuid?.() !== 0) return skipBecause(context, NOT_ROOT);
    const { cwd, home } = tempHome();
    chmodSync(home, 0o755);
    chmodSync(cwd, 0o777);
    const locked = join(home, 'locked');
    mkdirSync(locked, { mode: 0o755 });
    const result = spawnSync(process.execPath, [axeForAnyone(), 'agents', 'init', 'a'], {
      cwd,
      env: { PATH: process.env.PATH, XDG_CONFIG_HOME: locked },
      encoding: 'utf8',
      uid: 12345,
      gid: 12345,
      timeout: 15_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^axe: agents init: cannot create \S+: permission denied\n$/);
  });

  it('concurrent inits of one name: exactly one creates it, the others say it exists', async () => {
    const { cwd, env, configDir } = tempHome();
    const results = await Promise.all(
      Array.from({ length: 8 }, () => {
        const child = spawn(process.execPath, [AXE_BIN, 'agents', 'init', 'same'], { cwd, env });
        let stderr = '';
        child.stderr.on('data', (chunk) => {
          stderr += chunk;
        });
        return new Promise<{ code: number | null; stderr: string }>((resolve) =>
          child.on('close', (code) => resolve({ code, stderr })),
        );
      }),
    );
    expect(results.filter((r) => r.code === 0)).toHaveLength(1);
    for (const failed of results.filter((r) => r.code !== 0)) {
      expect(failed.code).toBe(2);
      expect(failed.stderr).toMatch(
        /^axe: agent config already exists: \S+same\.toml \(not overwritten\)\n$/,
      );
    }
    expect(readFileSync(join(configDir, 'agents', 'same.toml'), 'utf8')).toContain('name = "same"');
  });
});

describe('no home directory', () => {
  it('a user without a passwd entry and no HOME: works from the XDG variables, else names what to set', (context) => {
    if (process.getuid?.() !== 0) return skipBecause(context, NOT_ROOT);
    const { cwd, home } = tempHome();
    chmodSync(home, 0o777);
    chmodSync(cwd, 0o777);
    const run = (args: string[], env: NodeJS.ProcessEnv) =>
      spawnSync(process.execPath, [axeForAnyone(), ...args], {
        cwd,
        env: { PATH: process.env.PATH, ...env },
        encoding: 'utf8',
        uid: 12345,
        gid: 12345,
        timeout: 15_000,
      });
    const xdg = {
      XDG_CONFIG_HOME: join(home, 'c'),
      XDG_DATA_HOME: join(home, 'd'),
      XDG_CACHE_HOME: join(home, 'k'),
    };
    expect(run(['config', 'path'], xdg)).toMatchObject({ status: 0, stdout: `${join(home, 'c', 'axe')}\n` });
    expect(run(['config', 'init'], xdg).status).toBe(0);
    expect(run(['agents', 'init', 'mine'], xdg).status).toBe(0);
    expect(run(['agents', 'list'], xdg)).toMatchObject({
      status: 0,
      stdout: 'mine\n',
    });

    for (const env of [{}, { HOME: '' }, { HOME: 'relative' }]) {
      const result = run(['config', 'path'], env);
      expect(result.status).toBe(2);
      expect(result.stderr).toBe(
        "axe: cannot find axe's directories: there is no home directory; set XDG_CONFIG_HOME (or HOME) to an absolute path\n",
      );
    }
    expect(run(['version'], {}).status).toBe(0);
  });
});
