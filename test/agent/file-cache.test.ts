import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { listAgents } from '../../internal/agent/load.js';
import { axe, tempHome } from '../cli/run-axe.js';
import { tempDirForFile } from '../temp-dir.js';

/** As file-cache.ts: a file is kept once it has been still this long. */
const SETTLE_MS = 2000;
const WHOLE_SECONDS = Math.floor(Date.now() / 1000) - 3600;

const root = tempDirForFile('axe-file-cache-');
const cacheHome = join(root, 'cache');
const env = { HOME: root, XDG_CACHE_HOME: cacheHome };
const cacheDir = join(cacheHome, 'axe', 'agent-files');

const toml = (name: string, extra = '') =>
  `name = "${name}"\ndescription = "${name} as written"\nmodel = "anthropic/claude-sonnet-4-5"\n${extra}`;

/** One agents directory per test (a cache file per set of directories), its files settled. */
const dirs: Record<string, string> = {};
function agentsDir(name: string, files: Record<string, string>): void {
  const dir = join(root, name);
  mkdirSync(dir);
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  dirs[name] = dir;
}

interface CacheFile {
  build: string;
  dirs: string[];
  /** A file's state, its data, and its agent when resolving it read no environment variable. */
  files: Record<string, [string, Record<string, unknown>, Record<string, unknown>?]>;
}

/** A forged description, in the kept data and the kept agent alike. */
function forgeDescription(cache: CacheFile, file: string, description: string): void {
  const [, data, spec] = cache.files[file]!;
  data.description = description;
  if (spec) spec.description = description;
}

function cacheFiles(): string[] {
  return readdirSync(cacheDir).map((name) => join(cacheDir, name));
}

/** The cache file of `dir`: the one whose `dirs` are [dir]. */
function cacheOf(dir: string): { path: string; cache: CacheFile } {
  for (const path of cacheFiles()) {
    const cache = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
    if (cache.dirs.length === 1 && cache.dirs[0] === dir) return { path, cache };
  }
  throw new Error(`no cache file for ${dir}`);
}

function edit(dir: string, change: (cache: CacheFile) => void): string {
  const { path, cache } = cacheOf(dir);
  change(cache);
  writeFileSync(path, JSON.stringify(cache));
  return path;
}

async function descriptions(dir: string, options: { env?: NodeJS.ProcessEnv } = {}) {
  const { agents, problems } = await listAgents([dir], options.env ?? env);
  return { listed: Object.fromEntries(agents.map((spec) => [spec.name, spec.description])), problems };
}

const cli = tempHome();

beforeAll(async () => {
  agentsDir('served', { 'alpha.toml': toml('alpha'), 'beta.toml': toml('beta') });
  agentsDir('revalidated', { 'alpha.toml': toml('alpha', 'workdir = "$AXE_TEST_PROJECT/src"\n') });
  agentsDir('rewritten', { 'gamma.toml': toml('gamma') });
  // Whole seconds, which utimes sets exactly, to be set again after the rewrite.
  utimesSync(join(dirs.rewritten!, 'gamma.toml'), WHOLE_SECONDS, WHOLE_SECONDS);
  agentsDir('never', {
    'clean.toml': toml('clean'),
    'unknown.toml': toml('unknown', 'colour = "red"\n'),
    'zero.toml': toml('zero', '[params]\ntemperature = -0.0\n'),
    'broken.toml': 'name = \n',
  });
  agentsDir('distrusted', { 'alpha.toml': toml('alpha') });
  agentsDir('pruning', { 'alpha.toml': toml('alpha') });
  agentsDir('fifo', { 'alpha.toml': toml('alpha') });
  mkdirSync(join(cli.home, '.config', 'axe', 'agents'), { recursive: true });
  writeFileSync(join(cli.home, '.config', 'axe', 'agents', 'alpha.toml'), toml('alpha'));
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS + 100));
});

describe('the agent file cache of a listing', () => {
  it('keeps the data and agents of clean, settled files; the next listing takes them from there', async () => {
    const dir = dirs.served!;
    const file = join(dir, 'alpha.toml');
    const { agents } = await listAgents([dir], env);
    expect(Object.fromEntries(agents.map((spec) => [spec.name, spec.description]))).toEqual({
      alpha: 'alpha as written',
      beta: 'beta as written',
    });
    const { cache } = cacheOf(dir);
    expect(Object.keys(cache.files).sort()).toEqual([file, join(dir, 'beta.toml')]);
    expect(cache.files[file]?.[1]).toEqual({
      name: 'alpha',
      description: 'alpha as written',
      model: 'anthropic/claude-sonnet-4-5',
    });
    // The agent as the listing resolved it, whole.
    expect(cache.files[file]?.[2]).toEqual(JSON.parse(JSON.stringify(agents[0])));
    const again = await listAgents([dir], env);
    expect(again.agents).toEqual(agents);
    // What the cache says is what the listing shows: the file is not read or resolved again.
    edit(dir, (cache) => {
      cache.files[file]![2]!.description = 'from the cache';
    });
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'from the cache', beta: 'beta as written' });
  });

  it('keeps only the data of an agent the environment shapes: resolved and validated again each time', async () => {
    const dir = dirs.revalidated!;
    const file = join(dir, 'alpha.toml');
    const listing = async (project?: string) => {
      const { agents, problems } = await listAgents([dir], { ...env, AXE_TEST_PROJECT: project });
      return { workdirs: agents.map((spec) => spec.workdir), problems: problems.map((p) => p.message) };
    };
    expect(await listing('/one')).toEqual({ workdirs: ['/one/src'], problems: [] });
    expect(cacheOf(dir).cache.files[file]).toHaveLength(2);
    expect(await listing('/two')).toEqual({ workdirs: ['/two/src'], problems: [] });
    expect(await listing()).toEqual({
      workdirs: [],
      problems: [expect.stringContaining('$AXE_TEST_PROJECT is not set')],
    });
    expect(await listing('/one')).toEqual({ workdirs: ['/one/src'], problems: [] });
    // Kept data the schema refuses sends the file to a fresh read.
    edit(dir, (cache) => {
      cache.files[file]![1].model = 5;
    });
    expect(await listing('/one')).toEqual({ workdirs: ['/one/src'], problems: [] });
    expect(cacheOf(dir).cache.files[file]?.[1].model).toBe('anthropic/claude-sonnet-4-5');
  });

  it('reads a changed file afresh, even one rewritten at once with the same size', async () => {
    const dir = dirs.rewritten!;
    const file = join(dir, 'gamma.toml');
    await descriptions(dir);
    expect(Object.keys(cacheOf(dir).cache.files)).toEqual([file]);
    const rewritten = toml('gamma').replace('as written', 'as changed');
    expect(rewritten.length).toBe(toml('gamma').length);
    writeFileSync(file, rewritten);
    // Its old times back, to the nanosecond: the change time still tells.
    utimesSync(file, WHOLE_SECONDS, WHOLE_SECONDS);
    expect(statSync(file, { bigint: true }).mtimeNs).toBe(BigInt(WHOLE_SECONDS) * 10n ** 9n);
    expect((await descriptions(dir)).listed).toEqual({ gamma: 'gamma as changed' });
    // Changed within the last two seconds: not kept until it has settled.
    expect(cacheOf(dir).cache.files).toEqual({});
  });

  it('never keeps a file with something to say, a fresh file, or data JSON would change', async () => {
    const dir = dirs.never!;
    writeFileSync(join(dir, 'fresh.toml'), toml('fresh'));
    const { listed, problems } = await descriptions(dir);
    expect(Object.keys(listed).sort()).toEqual(['clean', 'fresh', 'unknown', 'zero']);
    expect(problems).toHaveLength(1);
    expect(Object.keys(cacheOf(dir).cache.files)).toEqual([join(dir, 'clean.toml')]);
  });

  it('ignores a cache that is damaged, writable by others, of another build or of other directories', async () => {
    const dir = dirs.distrusted!;
    const file = join(dir, 'alpha.toml');
    await descriptions(dir);
    const forge = (change: (cache: CacheFile) => void) =>
      edit(dir, (cache) => {
        forgeDescription(cache, file, 'forged');
        change(cache);
      });
    const path = forge(() => {});
    chmodSync(path, 0o666);
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'alpha as written' });
    expect(readdirSync(cacheDir)).toContain(path.split('/').pop());
    forge((cache) => {
      cache.build = 'another build';
    });
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'alpha as written' });
    forge((cache) => {
      cache.dirs = [join(root, 'elsewhere')];
    });
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'alpha as written' });
    writeFileSync(cacheOf(dir).path, '{"build": ');
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'alpha as written' });
    // Each time made again, as it should be.
    expect(cacheOf(dir).cache.files[file]?.[1].description).toBe('alpha as written');
  });

  it('does not wait on a FIFO where its cache file is', async () => {
    const dir = dirs.fifo!;
    await descriptions(dir);
    const { path } = cacheOf(dir);
    rmSync(path);
    execFileSync('mkfifo', [path]);
    expect((await descriptions(dir)).listed).toEqual({ alpha: 'alpha as written' });
    expect(cacheOf(dir).cache.files[join(dir, 'alpha.toml')]?.[1].description).toBe('alpha as written');
  });

  it('removes caches not rewritten for a week and temp files of killed writes', async () => {
    const dir = dirs.pruning!;
    mkdirSync(cacheDir, { recursive: true });
    const aged = (name: string, ageMs: number) => {
      const path = join(cacheDir, name);
      writeFileSync(path, '{}');
      const then = new Date(Date.now() - ageMs);
      utimesSync(path, then, then);
      return name;
    };
    const hour = 3600 * 1000;
    const old = aged('0badcafe.json', 8 * 24 * hour);
    const recent = aged('0goodcafe.json', 6 * 24 * hour);
    const killed = aged('.0badcafe.json.123.abc.tmp', 2 * hour);
    const writing = aged('.0goodcafe.json.456.def.tmp', 0);
    await descriptions(dir);
    const names = readdirSync(cacheDir);
    expect(names).toEqual(expect.arrayContaining([recent, writing]));
    expect(names).not.toContain(old);
    expect(names).not.toContain(killed);
  });

  it('without a usable cache directory, lists as before', async () => {
    const blocked = join(root, 'blocked');
    writeFileSync(blocked, 'a file where the cache directory would be');
    const dir = dirs.served!;
    expect(await descriptions(dir, { env: { HOME: root, XDG_CACHE_HOME: blocked } })).toEqual({
      listed: { alpha: 'alpha as written', beta: 'beta as written' },
      problems: [],
    });
  });

  it('axe agents list keeps its cache under the cache directory', () => {
    const { cwd, env: cliEnv, home } = cli;
    const listed = { code: 0, stdout: 'alpha - alpha as written\n', stderr: '' };
    expect(axe(['agents', 'list'], { cwd, env: cliEnv })).toEqual(listed);
    const dir = join(home, '.cache', 'axe', 'agent-files');
    const [name, ...others] = readdirSync(dir);
    expect(others).toEqual([]);
    const path = join(dir, name!);
    const cache = JSON.parse(readFileSync(path, 'utf8')) as CacheFile;
    const file = join(home, '.config', 'axe', 'agents', 'alpha.toml');
    expect(Object.keys(cache.files)).toEqual([file]);
    forgeDescription(cache, file, 'from the cache');
    writeFileSync(path, JSON.stringify(cache));
    expect(axe(['agents', 'list'], { cwd, env: cliEnv }).stdout).toBe('alpha - from the cache\n');
  });
});
