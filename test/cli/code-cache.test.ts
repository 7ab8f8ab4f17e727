import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

  it("writing a cache removes other builds' and other Node versions' caches, and nothing else", () => {
    const { run, cacheDir } = setUp();
    expect(run(['agents', 'list']).code).toBe(0);
    const [current = ''] = cachesOf(cacheDir);
    const build = current.split('-')[0];
    rmSync(join(cacheDir, current));
    writeFileSync(join(cacheDir, `0000000000000000${suffix}`), 'an older build');
    writeFileSync(join(cacheDir, `${build}-v18.0.0-${process.arch}-agents.bin`), 'another Node');
    writeFileSync(join(cacheDir, 'notes.txt'), 'not a cache');
    expect(run(['agents', 'list']).code).toBe(0);
    expect(readdirSync(cacheDir).sort()).toEqual([current, 'notes.txt'].sort());
  });

  it('a cache directory that cannot be written changes nothing: same output, no warning', () => {
    const { run } = setUp();
    const expected = run(['agents', 'list'], { AXE_NO_CODE_CACHE: '1' });
    const { home } = tempHome();
    writeFileSync(join(home, 'a-file'), '');
    expect(run(['agents', 'list'], { XDG_CACHE_HOME: join(home, 'a-file') })).toEqual(expected);
  });

  it('an install without its CLI bundle says so in one line (exit 1)', () => {
    const { home, cwd, env } = tempHome();
    const dist = join(home, 'dist');
    cpSync(dirname(CLI), dist, { recursive: true });
    rmSync(join(dist, 'cli.js'));
    const result = spawnSync(process.execPath, [join(dist, 'main.js'), 'agents', 'list'], {
      cwd,
      env,
      encoding: 'utf8',
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `axe: cannot start: ${join(dist, 'cli.js')}: no such file or directory (reinstall axe)\n`,
    );
    expect(result.stdout).toBe('');
  });
});
