import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../internal/provider/types.js';
import { isIgnored, parseGitignore } from '../../internal/tools/gitignore.js';
import { MAX_GLOB_RESULTS } from '../../internal/tools/glob-files.js';
import { MAX_GREP_MATCHES } from '../../internal/tools/grep-files.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { expectEscapesUnguarded, makeAttackBox, revealsOutside, SECRET } from './attack-box.js';
import { call, makeSandbox, toolContext } from './helpers.js';

/** glob_files and grep_files: the read-only search tools, inside the workdir sandbox. */
const { glob_files, grep_files } = BUILTIN_TOOLS;
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tree(files: Record<string, string>): string {
  const box = makeSandbox();
  cleanups.push(box.cleanup);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(box.workdir, path, '..'), { recursive: true });
    writeFileSync(join(box.workdir, path), content);
  }
  return box.workdir;
}

const PROJECT = {
  'README.md': 'intro\n',
  'src/a.ts': 'export function parse() {}\nconst x = 1;\n',
  'src/deep/b.ts': 'function Parse() {}\n// parse twice: parse\n',
  'src/deep/c.js': 'parse();\n',
  'notes/todo.md': 'TODO: parse dates\n',
  '.git/config': 'parse = true\n',
  '.gitignore': 'dist/\n*.log\n/build\n!keep.log\n',
  'dist/out.ts': 'function parse() {}\n',
  'build/x.ts': 'parse\n',
  'src/build/y.ts': 'parse\n',
  'debug.log': 'parse\n',
  'keep.log': 'parse\n',
  'bin.dat': 'parse\u0000binary',
};

describe('glob_files', () => {
  it('matches relative paths, sorted; skips .git and what .gitignore ignores', async () => {
    const workdir = tree(PROJECT);
    const out = await call(glob_files, { pattern: '**/*.ts' }, toolContext(workdir));
    expect(out).toEqual({ isError: false, content: 'src/a.ts\nsrc/build/y.ts\nsrc/deep/b.ts' });
    expect((await call(glob_files, { pattern: '*.log' }, toolContext(workdir))).content).toBe('keep.log');
    expect((await call(glob_files, { pattern: 'src/*' }, toolContext(workdir))).content).toBe('src/a.ts');
    expect(await call(glob_files, { pattern: '*.rs' }, toolContext(workdir))).toEqual({
      isError: false,
      content: 'no files match "*.rs"',
    });
    expect((await call(glob_files, { pattern: 'src/[' }, toolContext(workdir))).isError).toBe(true);
    expect((await call(glob_files, {}, toolContext(workdir))).content).toMatch(/"pattern" is required/);
  });

  it(`caps the answer at ${MAX_GLOB_RESULTS} paths and counts the rest`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < MAX_GLOB_RESULTS + 7; i++) files[`f/${String(i).padStart(5, '0')}.txt`] = '';
    const out = await call(glob_files, { pattern: 'f/*.txt' }, toolContext(tree(files)));
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(MAX_GLOB_RESULTS + 1);
    expect(lines.at(-1)).toBe('(7 more not shown: narrow the pattern)');
  });
});

describe('grep_files', () => {
  it('path:line: text for every matching line, in path order; binary, .git and ignored files skipped', async () => {
    const workdir = tree(PROJECT);
    const out = await call(grep_files, { pattern: 'parse' }, toolContext(workdir));
    expect(out.content.split('\n')).toEqual([
      'keep.log:1: parse',
      'notes/todo.md:1: TODO: parse dates',
      'src/a.ts:1: export function parse() {}',
      'src/build/y.ts:1: parse',
      'src/deep/b.ts:2: // parse twice: parse',
      'src/deep/c.js:1: parse();',
    ]);
    const filtered = await call(
      grep_files,
      { pattern: 'parse', glob: '**/*.ts', ignore_case: true },
      toolContext(workdir),
    );
    expect(filtered.content.split('\n')).toEqual([
      'src/a.ts:1: export function parse() {}',
      'src/build/y.ts:1: parse',
      'src/deep/b.ts:1: function Parse() {}',
      'src/deep/b.ts:2: // parse twice: parse',
    ]);
    expect(
      (await call(grep_files, { pattern: '\\bPARSE\\(', ignore_case: 'true' }, toolContext(workdir))).content,
    ).toContain('src/deep/c.js:1: parse();');
    expect((await call(grep_files, { pattern: 'nothing here' }, toolContext(workdir))).content).toBe(
      'no matches for "nothing here"',
    );
  });

  it('a backtracking pattern is refused at once instead of hanging the run; a bad one is named', async () => {
    const workdir = tree({ 'a.txt': `${'a'.repeat(50_000)}b\n` });
    // Against 50 000 a's a backtracking engine would not end within the test's timeout at all.
    const catastrophic = await call(grep_files, { pattern: '(a+)+$' }, toolContext(workdir));
    expect(catastrophic.isError).toBe(false);
    expect(catastrophic.content).toBe('no matches for "(a+)+$"');
    const backref = await call(grep_files, { pattern: '(a)\\1' }, toolContext(workdir));
    expect(backref).toEqual({
      isError: true,
      content:
        'invalid regular expression "(a)\\\\1": backreferences and lookaround are not supported (patterns must run in linear time)',
    });
    expect((await call(grep_files, { pattern: '(' }, toolContext(workdir))).content).toMatch(
      /^invalid regular expression "\(": /,
    );
  });

  it(`caps the answer at ${MAX_GREP_MATCHES} lines and counts the rest; long lines are cut`, async () => {
    const workdir = tree({
      'many.txt': 'hit\n'.repeat(MAX_GREP_MATCHES + 3),
      'long.txt': `hit${'x'.repeat(900)}\n`,
    });
    const out = await call(grep_files, { pattern: '^hit' }, toolContext(workdir));
    const lines = out.content.split('\n');
    expect(lines).toHaveLength(MAX_GREP_MATCHES + 1);
    expect(lines[0]).toMatch(/^long\.txt:1: hitx+…$/);
    expect(lines[0]?.length).toBeLessThan(520);
    expect(lines.at(-1)).toBe('(4 more matching lines not shown: narrow the pattern or the glob)');
  });

  it('never reads outside the workdir: symlinked files and directories are not followed', async () => {
    expectEscapesUnguarded((box) =>
      revealsOutside(spawnSync('grep', ['-rR', 'SECRET', box.workdir]).stdout.toString()),
    );
    const box = makeAttackBox();
    cleanups.push(box.cleanup);
    symlinkSync('/etc/passwd', join(box.workdir, 'passwd'));
    for (const args of [
      { pattern: 'SECRET' },
      { pattern: 'root' },
      { pattern: '.', glob: '**' },
    ] as JsonObject[]) {
      const out = await call(grep_files, args, toolContext(box.workdir));
      expect(revealsOutside(out.content), JSON.stringify(args)).toBe(false);
    }
    const listed = await call(glob_files, { pattern: '**' }, toolContext(box.workdir));
    expect(listed.content).toBe('sub/inner.txt');
    expect(SECRET).toBe('TOP SECRET');
  });

  it('a FIFO in the workdir is skipped, never waited for', async () => {
    const workdir = tree({ 'a.txt': 'needle\n' });
    execFileSync('mkfifo', [join(workdir, 'pipe.txt')]);
    execFileSync('mkfifo', [join(workdir, '.gitignore')]);
    const out = await call(grep_files, { pattern: 'needle' }, toolContext(workdir));
    expect(out.content).toBe('a.txt:1: needle');
  });
});

describe('.gitignore rules', () => {
  it('name at any depth, anchored paths, directories only, ** and ! as git reads them', () => {
    const rules = [
      ...parseGitignore(
        '# comment\n*.tmp\n/only-root.txt\ndocs/build/\n**/cache\nlogs/**\n!logs/keep.txt\n',
        '',
      ),
      ...parseGitignore('local.txt\n', 'pkg'),
    ];
    const ignored = (path: string, dir = false) => isIgnored(path, dir, rules);
    expect(ignored('a.tmp')).toBe(true);
    expect(ignored('x/y/b.tmp')).toBe(true);
    expect(ignored('only-root.txt')).toBe(true);
    expect(ignored('sub/only-root.txt')).toBe(false);
    expect(ignored('docs/build', true)).toBe(true);
    expect(ignored('docs/build')).toBe(false);
    expect(ignored('a/b/cache', true)).toBe(true);
    expect(ignored('logs/x.txt')).toBe(true);
    expect(ignored('logs/keep.txt')).toBe(false);
    expect(ignored('pkg/local.txt')).toBe(true);
    expect(ignored('local.txt')).toBe(false);
  });
});
