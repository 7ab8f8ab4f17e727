import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compileGlob, GlobError, globFiles, globWork } from '../../internal/fs/glob.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { call, makeSandbox, toolContext } from '../tools/helpers.js';

/**
 * Globs come from models (glob_files, grep_files' `glob`) and agent files (`files = [...]`).
 * Each `*` used to become a backtracking `[^/]*`: 'a'.repeat(100) against `*a*a*a*a*a*b` took
 * 7.9 s (one more `*a`: 108 s) with the event loop blocked, so no abort or deadline could end it;
 * a path 40 directories deep against eight `**` took 26 s. Matching is now polynomial, which the
 * tests check by counting the matchers' steps (globWork), not by timing them: a bound in
 * milliseconds fails on a busy machine, and a step count is the same everywhere.
 */
const sandbox = makeSandbox();
afterAll(() => sandbox.cleanup());

const NAME = 'a'.repeat(100);

/** The result of `work` and how many matcher steps it took. */
function counted<T>(work: () => T): { value: T; steps: number } {
  const before = globWork.steps;
  const value = work();
  return { value, steps: globWork.steps - before };
}

/**
 * The most steps a greedy match may take: the path's names against the pattern's segments
 * (names+1 × segments+1 steps at most), each step matching one name against one segment in at
 * most (characters+1) × (pattern characters+1) steps.
 */
function stepBound(pattern: string, path: string): number {
  const names = path.split('/');
  const segments = pattern.split('/');
  const longest = (parts: string[]) => Math.max(...parts.map((part) => part.length));
  return (names.length + 1) * (segments.length + 1) * (1 + (longest(names) + 1) * (longest(segments) + 1));
}

describe('glob: adversarial patterns take polynomially many steps', () => {
  it('stars around repeated letters against a long name', () => {
    for (const [pattern, name, expected] of [
      ['*a*a*a*a*a*b', NAME, false],
      ['*a*a*a*a*a*a*b', NAME, false],
      [`${'*a'.repeat(40)}*b`, NAME, false],
      [`${'*a'.repeat(40)}*`, NAME, true],
      ['*a*a*a*a*a*a', NAME, true],
      [`${'*a'.repeat(60)}b`, 'a'.repeat(5000), false],
      [`${'*?'.repeat(60)}b`, 'a'.repeat(5000), false],
    ] as const) {
      const match = compileGlob(pattern);
      const { value, steps } = counted(() => match(name));
      expect(`${pattern} ~ ${name.length} a's: ${value}`).toBe(
        `${pattern} ~ ${name.length} a's: ${expected}`,
      );
      expect(steps).toBeGreaterThan(0);
      expect(steps, `${pattern} ~ ${name.length} a's`).toBeLessThanOrEqual(stepBound(pattern, name));
    }
  });

  it('many ** against a deep path', () => {
    const deep = `${Array.from({ length: 40 }, (_, i) => `d${i}`).join('/')}/x`;
    for (const [pattern, expected] of [
      ['**/**/**/**/**/**/**/**/b', false],
      ['**/**/**/**/**/**/**/**/x', true],
      ['**/d1*/**/d3*/**/x', true],
      ['**/d3*/**/d1*/**/d39/y', false],
    ] as const) {
      const match = compileGlob(pattern);
      const { value, steps } = counted(() => match(deep));
      expect(`${pattern}: ${value}`).toBe(`${pattern}: ${expected}`);
      expect(steps).toBeGreaterThan(0);
      expect(steps, pattern).toBeLessThanOrEqual(stepBound(pattern, deep));
    }
  });

  it('glob_files and globFiles (agent files) match through the same bounded matcher', async () => {
    writeFileSync(join(sandbox.workdir, NAME), 'x');
    writeFileSync(join(sandbox.workdir, `${NAME}b`), 'x');
    // Two files, each matched against the pattern: at most two bounded matches.
    let before = globWork.steps;
    const out = await call(
      BUILTIN_TOOLS.glob_files,
      { pattern: '*a*a*a*a*a*a*b' },
      toolContext(sandbox.workdir),
    );
    expect(out.content).toBe(`${NAME}b`);
    expect(globWork.steps - before).toBeGreaterThan(0);
    expect(globWork.steps - before).toBeLessThanOrEqual(2 * stepBound('*a*a*a*a*a*a*b', `${NAME}b`));
    before = globWork.steps;
    expect(await globFiles(['*a*a*a*a*a*a*c', '*a*a*a*a*a*a'], sandbox.workdir)).toEqual([NAME]);
    expect(globWork.steps - before).toBeGreaterThan(0);
    expect(globWork.steps - before).toBeLessThanOrEqual(4 * stepBound('*a*a*a*a*a*a*c', `${NAME}b`));
  });
});

describe('glob: every supported form still matches as before', () => {
  it('*, ?, classes, escapes, dotfiles, ** and code points', () => {
    const cases: [string, string, boolean][] = [
      // `*`: any run within one name, the empty one too; never across `/`
      ['*', 'main.go', true],
      ['*', '', true],
      ['a*', 'a', true],
      ['*a', 'ba', true],
      ['*a', 'ab', false],
      ['a*b*c', 'aXbYbZc', true],
      ['a*b*c', 'aXbYcZ', false],
      ['a**b', 'aXYb', true],
      ['*.go', 'cmd/main.go', false],
      ['*/*.go', 'cmd/main.go', true],
      // `?`: exactly one character (a whole code point)
      ['file?.txt', 'file1.txt', true],
      ['file?.txt', 'file.txt', false],
      ['file?.txt', 'file12.txt', false],
      ['?', '😀', true],
      ['??', '😀', false],
      ['a?c', 'a😀c', true],
      ['*😀', 'x😀', true],
      // classes: ranges, negation with ^ or !, `]` first, escapes inside
      ['file[0-9].txt', 'file7.txt', true],
      ['file[0-9].txt', 'filex.txt', false],
      ['file[^0-9].txt', 'filex.txt', true],
      ['file[^0-9].txt', 'file7.txt', false],
      ['file[!0-9].txt', 'filex.txt', true],
      ['file[!0-9].txt', 'file7.txt', false],
      ['[abc]', 'b', true],
      ['[abc]', 'd', false],
      ['[]a]', ']', true],
      ['[]a]', 'a', true],
      ['[]a]', 'b', false],
      ['x[a^]', 'x^', true],
      ['[😀x]', '😀', true],
      ['[*]', '*', true],
      ['[*]', 'a', false],
      ['*[0-9]', 'v10', true],
      ['*[0-9]', 'v1a', false],
      // escapes: the next character literally
      ['\\*', '*', true],
      ['\\*', 'a', false],
      ['a\\?b', 'a?b', true],
      ['a\\?b', 'axb', false],
      ['\\[x]', '[x]', true],
      ['a\\\\b', 'a\\b', true],
      // dotfiles: no special case (as Go's filepath.Match), `*` and `**` match them
      ['*', '.env', true],
      ['.*', '.env', true],
      ['*.ts', '.hidden.ts', true],
      ['**/*.yml', '.github/workflows/ci.yml', true],
      ['?env', '.env', true],
      // literals and `**`
      ['src/a.ts', 'src/a.ts', true],
      ['src/a.ts', 'src/b.ts', false],
      ['**', 'a/b/c', true],
      ['**/*.go', 'main.go', true],
      ['**/*.go', 'a/b/c.go', true],
      ['a/**/b.go', 'a/b.go', true],
      ['a/**/b.go', 'a/x/y/b.go', true],
      ['a/**/b.go', 'b/x/y/b.go', false],
      ['a/**', 'a/x/y', true],
      ['a/**/c/**/e', 'a/b/c/d/c/e', true],
      ['a/**/c/**/e', 'a/b/c/d/e/f', false],
      ['./src/*.ts', 'src/a.ts', true],
      // no brace expansion: `{a,b}` is literal text
      ['{a,b}.ts', 'a.ts', false],
      ['{a,b}.ts', '{a,b}.ts', true],
      ['*.{ts,js}', 'x.{ts,js}', true],
    ];
    for (const [pattern, file, expected] of cases) {
      expect(`${pattern} ~ ${file}: ${compileGlob(pattern)(file)}`).toBe(`${pattern} ~ ${file}: ${expected}`);
    }
  });

  it('invalid patterns are refused when compiled', () => {
    expect(() => compileGlob('src/[')).toThrow(GlobError);
    expect(() => compileGlob('a[]')).toThrow('unclosed "["');
    expect(() => compileGlob('a\\')).toThrow('trailing "\\"');
    expect(() => compileGlob('/')).toThrow('empty');
    expect(() => compileGlob('[z-a]')).toThrow(SyntaxError);
  });

  it('agrees with the former regex translation on random short patterns and names', () => {
    const step = fc.constantFrom(
      '*',
      '?',
      'a',
      'b',
      '.',
      '[ab]',
      '[^a]',
      '[!b]',
      '[a-b]',
      '\\*',
      '\\?',
      '😀',
    );
    const pattern = fc.array(step, { minLength: 1, maxLength: 7 }).map((steps) => steps.join(''));
    const name = fc
      .array(fc.constantFrom('a', 'b', '.', '*', '?', '😀'), { maxLength: 8 })
      .map((chars) => chars.join(''));
    fc.assert(
      fc.property(pattern, name, (p, n) => {
        fc.pre(p !== '.'); // a `.` segment is dropped ("./src"), so `.` alone is an empty pattern
        expect(compileGlob(p)(n)).toBe(formerSegmentRegex(p).test(n));
      }),
      { numRuns: 3000 },
    );
  });
});

/** The translation glob.ts used before, for one segment: the reference on inputs too short to blow up. */
function formerSegmentRegex(segment: string): RegExp {
  const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i] as string;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '\\') source += escapeRegex(segment[++i] as string);
    else if (char === '[') {
      const close = segment.indexOf(']', i + 2);
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\]\\^]/g, '\\$&')}]`;
      i = close;
    } else source += escapeRegex(char);
  }
  return new RegExp(`^${source}$`, 'u');
}
