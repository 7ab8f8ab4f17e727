import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type AxeResult, axe, CLI, tempHome } from './run-axe.js';

/**
 * dist/main.js runs the CLI bundle from V8's code cache: the first successful run of a command
 * writes `<cache dir>/code-cache/<build>-<node>-<arch>-<command>.bin`, later runs load it. The
 * cache never changes what a run does, whatever state it is in.
 */
function setUp(): { run: (args: string[], extraEnv?: NodeJS.ProcessEnv) => AxeResult; cacheDir: string } {
  const { cwd, env, configDir } = tempHome();
  mkdirSync(join(configDir, 'agents'), { recursive: true });
  writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\ndescription = "An agent"\nmodel = "a/b"\n');
  const cacheDir = join(env.XDG_CACHE_HOME ?? '', 'axe', 'code-cache');
  return { run: (args, extraEnv = {}) => axe(args, { cwd, env: { ...env, ...extraEnv } }), cacheDir };
}

const suffix = `-${process.version}-${process.arch}-agents.bin`;
const cachesOf = (dir: string): string[] => readdirSync(dir).filter((name) => name.endsWith('.bin'));

describe('the code cache', () => {
  it("a command's first successful run writes its cache (owner-only); the next runs use it as it is", () => {
    const { run, cacheDir } = setUp();
    const first = run(['agents', 'list']);
    expect(first).toEqual({ code: 0, stdout: 'a - An agent\n', stderr: '' });
    const [cache] = cachesOf(cacheDir);
    expect(cache).toMatch(new RegExp(`^[0-9a-f]{16}${suffix.replace(/[.]/g, '\\.')}$`));
    const file = join(cacheDir, cache ?? '');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    const written = statSync(file);
    // A cache V8 rejected would be written again (a new file by rename): this one was accepted.
    for (let i = 0; i < 2; i++) expect(run(['agents', 'list'])).toEqual(first);
    expect(statSync(file).ino).toBe(written.ino);
    expect(statSync(file).mtimeMs).toBe(written.mtimeMs);
    // Another command gets a cache of its own.
    expect(run(['run', 'a', '--dry-run']).code).toBe(0);
    expect(
      cachesOf(cacheDir)
        .map((name) => name.replace(/^[0-9a-f]+-/, ''))
        .sort(),
    ).toEqual([suffix, suffix.replace('agents', 'run-dry')].map((name) => name.slice(1)).sort());
  });

  it('a run that compiled notably more than the cache holds makes it again; then it stays', () => {
    const { cwd, env, configDir } = tempHome();
    const run = (args: string[]) => axe(args, { cwd, env });
    const cacheDir = join(env.XDG_CACHE_HOME ?? '', 'axe', 'code-cache');
    // No agents yet: listing them compiles little.
    expect(run(['agents', 'list'])).toMatchObject({ code: 0, stdout: '' });
    const [name] = cachesOf(cacheDir);
    const file = join(cacheDir, name ?? '');
    const small = statSync(file);
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n');
    expect(run(['agents', 'show', 'a', '--json']).code).toBe(0);
    const grown = statSync(file);
    expect(grown.ino).not.toBe(small.ino);
    expect(grown.size).toBeGreaterThan(small.size);
    for (const args of [
      ['agents', 'show', 'a', '--json'],
      ['agents', 'list'],
    ]) {
      expect(run(args).code).toBe(0);
      expect(statSync(file).ino).toBe(grown.ino);
    }
  });

  it('after three runs in a row that add nothing, the cache is kept as it is; a cache made again counts anew', () => {
    const { cwd, env, configDir } = tempHome();
    const run = (args: string[]) => axe(args, { cwd, env });
    const cacheDir = join(env.XDG_CACHE_HOME ?? '', 'axe', 'code-cache');
    const marks = () =>
      readdirSync(cacheDir)
        .filter((entry) => entry.includes('.quiet-'))
        .sort();
    // No agents yet: listing them compiles little.
    expect(run(['agents', 'list']).code).toBe(0);
    const [name = ''] = cachesOf(cacheDir);
    const file = join(cacheDir, name);
    expect(marks()).toEqual([]);
    for (let i = 0; i < 3; i++) expect(run(['agents', 'list']).code).toBe(0);
    expect(marks()).toEqual([1, 2, 3].map((n) => `${name}.quiet-${n}`));
    // Settled: what `agents show` compiles beyond it (it grows an unsettled cache) is not added.
    const settled = readFileSync(file);
    const { ino } = statSync(file);
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n');
    expect(run(['agents', 'show', 'a', '--json']).code).toBe(0);
    expect(statSync(file).ino).toBe(ino);
    expect(readFileSync(file).equals(settled)).toBe(true);
    expect(marks()).toHaveLength(3);
    // A damaged cache is made again, and the marks of the one it replaced go; another build's go
    // with its cache, after a week.
    const foreign = [`0000000000000000${suffix}.quiet-1`, `0000000000000000${suffix}.quiet-2`];
    for (const [index, mark] of foreign.entries()) {
      writeFileSync(join(cacheDir, mark), '');
      const time = (Date.now() - (index === 0 ? 8 * 86400_000 : 0)) / 1000;
      utimesSync(join(cacheDir, mark), time, time);
    }
    writeFileSync(file, Buffer.alloc(settled.length, 7));
    expect(run(['agents', 'show', 'a', '--json']).code).toBe(0);
    expect(marks()).toEqual([foreign[1]]);
    rmSync(join(cacheDir, foreign[1] ?? ''));
    expect(run(['agents', 'show', 'a', '--json']).code).toBe(0);
    expect(marks()).toEqual([`${name}.quiet-1`]);
  });

  it('a cache older than a day is kept as it is, whatever a run compiles', () => {
    const { cwd, env, configDir } = tempHome();
    const run = (args: string[]) => axe(args, { cwd, env });
    const cacheDir = join(env.XDG_CACHE_HOME ?? '', 'axe', 'code-cache');
    expect(run(['agents', 'list']).code).toBe(0);
    const [name] = cachesOf(cacheDir);
    const file = join(cacheDir, name ?? '');
    // The header's fourth word: when the cache was made (Unix seconds); the checksum covers the rest.
    const data = readFileSync(file);
    data.writeUInt32LE(Math.floor(Date.now() / 1000) - 2 * 86400, 12);
    writeFileSync(file, data);
    const old = statSync(file);
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n');
    expect(run(['agents', 'show', 'a', '--json']).code).toBe(0);
    expect(statSync(file).ino).toBe(old.ino);
    expect(readFileSync(file).equals(data)).toBe(true);
  });

  it('a damaged, cut or foreign cache is not used: the run is the same, and a good cache replaces it', () => {
    const { run, cacheDir } = setUp();
    const clean = run(['run', 'a', '--dry-run'], { AXE_NO_CODE_CACHE: '1' });
    expect(run(['run', 'a', '--dry-run'])).toEqual(clean);
    const [name] = cachesOf(cacheDir);
    const file = join(cacheDir, name ?? '');
    const good = readFileSync(file);
    // A damaged disk block inside: V8 itself would take it (and crash on it).
    const damaged = (offset: number): Buffer => {
      const copy = Buffer.from(good);
      copy.fill(0xa5, offset, offset + 512);
      return copy;
    };
    const bad = [
      damaged(1000),
      damaged(good.length >> 1),
      damaged(good.length - 600),
      Buffer.alloc(good.length, 7),
      good.subarray(0, good.length >> 1),
      Buffer.alloc(0),
    ];
    for (const data of bad) {
      writeFileSync(file, data);
      expect(run(['run', 'a', '--dry-run'])).toEqual(clean);
      expect(readFileSync(file).equals(data)).toBe(false);
      // The new cache is good: the next run uses it as it is.
      const ino = statSync(file).ino;
      expect(run(['run', 'a', '--dry-run'])).toEqual(clean);
      expect(statSync(file).ino).toBe(ino);
    }
  });

  it('a failed run writes no cache; AXE_NO_CODE_CACHE=1 writes none', () => {
    const { run, cacheDir } = setUp();
    expect(run(['run', 'missing']).code).toBe(2);
    expect(run(['agents', 'list'], { AXE_NO_CODE_CACHE: '1' }).code).toBe(0);
    expect(() => readdirSync(cacheDir)).toThrow(/ENOENT/);
  });

  it("writing a cache removes other builds', Node versions' and flags' caches a week old, and killed writes' temp files", () => {
    const { run, cacheDir } = setUp();
    expect(run(['agents', 'list']).code).toBe(0);
    const [current = ''] = cachesOf(cacheDir);
    const build = current.split('-')[0];
    rmSync(join(cacheDir, current));
    const weekOld = (Date.now() - 8 * 86400_000) / 1000;
    const hourOld = (Date.now() - 2 * 3600_000) / 1000;
    const files = {
      [`0000000000000000${suffix}`]: weekOld,
      [`${build}-v18.0.0-${process.arch}-agents.bin`]: weekOld,
      [`0000000000000000-v18.0.0-${process.arch}-run.bin`]: Date.now() / 1000,
      [`.${current}.123.abc.tmp`]: hourOld,
      [`.${current}.124.abd.tmp`]: Date.now() / 1000,
      'notes.txt': weekOld,
    };
    for (const [name, time] of Object.entries(files)) {
      writeFileSync(join(cacheDir, name), 'x');
      utimesSync(join(cacheDir, name), time, time);
    }
    expect(run(['agents', 'list']).code).toBe(0);
    expect(readdirSync(cacheDir).sort()).toEqual(
      [
        current,
        `0000000000000000-v18.0.0-${process.arch}-run.bin`,
        `.${current}.124.abd.tmp`,
        'notes.txt',
      ].sort(),
    );
  });

  it('a cache made from another cli.js (an edit of the same length) is not used', () => {
    const { home, cwd, env, configDir } = tempHome();
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(
      join(configDir, 'agents', 'a.toml'),
      'name = "a"\ndescription = "An agent"\nmodel = "a/b"\n',
    );
    const dist = join(home, 'dist');
    cpSync(dirname(CLI), dist, { recursive: true });
    const list = () =>
      spawnSync(process.execPath, [join(dist, 'main.js'), 'agents', 'list'], { cwd, env, encoding: 'utf8' });
    expect(list().stdout).toBe('a - An agent\n');
    expect(list().stdout).toBe('a - An agent\n');
    // The bundle `agents` runs from (internal/startup/bundle.ts).
    const bundle = join(dist, 'cli-agent-files.js');
    const text = readFileSync(bundle, 'latin1');
    // The separator of `agents list`, in the bundle's template literal.
    const after = '{oneLine(spec.description)}';
    const edited = text.replace(`} - $${after}`, `} X $${after}`);
    expect(edited).not.toBe(text);
    expect(edited.length).toBe(text.length);
    writeFileSync(bundle, edited, 'latin1');
    expect(list().stdout).toBe('a X An agent\n');
  });

  it('a cache V8 crashed on is removed by the next run (a mark left by a process that never exited)', () => {
    const { run, cacheDir } = setUp();
    const expected = run(['agents', 'list']);
    const [name = ''] = cachesOf(cacheDir);
    const file = join(cacheDir, name);
    const { ino } = statSync(file);
    // While a run uses the cache it is marked; a running process's mark is left alone.
    writeFileSync(`${file}.${process.pid}.using`, '');
    expect(run(['agents', 'list'])).toEqual(expected);
    expect(statSync(file).ino).toBe(ino);
    // A process that is gone (here: one that already exited) left its mark: it crashed or was killed.
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    writeFileSync(`${file}.${gone.stdout}.using`, '');
    // Removed, then made again at the run's end (the new file may get the old inode number).
    utimesSync(file, 1, 1);
    expect(run(['agents', 'list'])).toEqual(expected);
    expect(statSync(file).mtimeMs).toBeGreaterThan(1000);
    expect(readdirSync(cacheDir).filter((entry) => entry.endsWith('.using'))).toEqual([
      `${name}.${process.pid}.using`,
    ]);
  });

  it('a cache writable by others, or not a regular file, is not used', () => {
    const { run, cacheDir } = setUp();
    const expected = run(['agents', 'list']);
    const [name = ''] = cachesOf(cacheDir);
    const file = join(cacheDir, name);
    chmodSync(file, 0o666);
    const { ino } = statSync(file);
    expect(run(['agents', 'list'])).toEqual(expected);
    // Not used, so made again: owner-only.
    expect(statSync(file).ino).not.toBe(ino);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it('runs with other Node options keep a cache of their own', () => {
    const { run, cacheDir } = setUp();
    expect(run(['agents', 'list']).code).toBe(0);
    const [plain = ''] = cachesOf(cacheDir);
    const { ino } = statSync(join(cacheDir, plain));
    for (let i = 0; i < 2; i++) {
      expect(run(['agents', 'list'], { NODE_OPTIONS: '--max-old-space-size=300' }).code).toBe(0);
      expect(run(['agents', 'list']).code).toBe(0);
    }
    expect(statSync(join(cacheDir, plain)).ino).toBe(ino);
    expect(cachesOf(cacheDir)).toHaveLength(2);
  });

  it('a cache directory that cannot be written changes nothing: same output, no warning', () => {
    const { run } = setUp();
    const expected = run(['agents', 'list'], { AXE_NO_CODE_CACHE: '1' });
    const { home } = tempHome();
    writeFileSync(join(home, 'a-file'), '');
    expect(run(['agents', 'list'], { XDG_CACHE_HOME: join(home, 'a-file') })).toEqual(expected);
  });

  it('run, and agents with validate, start from smaller bundles; a command outside the one chosen runs from the full one', () => {
    const { home, cwd, env, configDir } = tempHome();
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n');
    const dist = join(home, 'dist');
    cpSync(dirname(CLI), dist, { recursive: true });
    const axeIn = (args: string[]) =>
      spawnSync(process.execPath, [join(dist, 'main.js'), ...args], { cwd, env, encoding: 'utf8' });
    const sizes = ['cli.js', 'cli-run.js', 'cli-agent-files.js'].map(
      (name) => statSync(join(dist, name)).size,
    );
    expect(sizes[1]).toBeLessThan(sizes[0] ?? 0);
    expect(sizes[2]).toBeLessThan((sizes[0] ?? 0) / 2);
    // `--agents-dir run`: main.js reads "run" as the command and picks run's bundle, which has no
    // `agents`: the full CLI lists the agents of ./run too (sorted by name).
    mkdirSync(join(cwd, 'run'));
    writeFileSync(join(cwd, 'run', 'here.toml'), 'name = "here"\nmodel = "a/b"\n');
    const fallback = axeIn(['--agents-dir', 'run', 'agents', 'list']);
    expect(fallback).toMatchObject({ status: 0, stdout: 'a\nhere\n', stderr: '' });
    const missing = (name: string) =>
      `axe: cannot start: ${join(dist, name)}: no such file or directory (reinstall axe)\n`;
    rmSync(join(dist, 'cli-run.js'));
    expect(axeIn(['run', 'a', '--dry-run'])).toMatchObject({ status: 1, stderr: missing('cli-run.js') });
    expect(axeIn(['agents', 'list'])).toMatchObject({ status: 0, stdout: 'a\n' });
    rmSync(join(dist, 'cli-agent-files.js'));
    expect(axeIn(['validate', 'a'])).toMatchObject({ status: 1, stderr: missing('cli-agent-files.js') });
    expect(axeIn(['config', 'path'])).toMatchObject({ status: 0, stdout: `${configDir}\n` });
  });

  it('an install whose CLI bundle is cut says so in one line (exit 1)', () => {
    const { home, cwd, env } = tempHome();
    const dist = join(home, 'dist');
    cpSync(dirname(CLI), dist, { recursive: true });
    // The bundle `agents` runs from (internal/startup/bundle.ts).
    const bundle = join(dist, 'cli-agent-files.js');
    writeFileSync(bundle, readFileSync(bundle).subarray(0, 5000));
    const result = spawnSync(process.execPath, [join(dist, 'main.js'), 'agents', 'list'], {
      cwd,
      env,
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`^axe: cannot start: ${bundle}: [^\n]+ \\(reinstall axe\\)\n$`));
    expect(result.stdout).toBe('');
  });

  it('an install without its CLI bundle says so in one line (exit 1)', () => {
    const { home, cwd, env } = tempHome();
    const dist = join(home, 'dist');
    cpSync(dirname(CLI), dist, { recursive: true });
    rmSync(join(dist, 'cli-agent-files.js'));
    const result = spawnSync(process.execPath, [join(dist, 'main.js'), 'agents', 'list'], {
      cwd,
      env,
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `axe: cannot start: ${join(dist, 'cli-agent-files.js')}: no such file or directory (reinstall axe)\n`,
    );
    expect(result.stdout).toBe('');
  });
});
