import path from 'node:path';
import { fsPromises } from './promises.js';

/**
 * A small glob for `files = [...]`. Segments are matched like Go's filepath.Match (`*`, `?`,
 * `[a-z]`, `[^x]`, `\` escapes; `*` never crosses `/`), and a `**` segment matches zero or more
 * directories. Not Node's fs.glob: Node 20 has none, and Node 22's and 24's expand `{a,b}` and
 * skip dot files on `*`, where Go's takes braces literally and matches `.hidden`.
 *
 * Patterns come from models (glob_files, grep_files' `glob`), so matching never backtracks more
 * than one step: a `*` per name and a `**` per path are matched by the greedy wildcard matcher,
 * which retries only from the last star, in time at most name length × pattern length. (A regex
 * `[^/]*a[^/]*a…b` backtracked exponentially: 'a'.repeat(100) against `*a*a*a*a*a*b` took 8 s,
 * one more `*a` 108 s, blocking the event loop and so the abort.)
 */
export class GlobError extends Error {}

type Segment =
  | { kind: 'globstar' }
  | { kind: 'literal'; text: string }
  | { kind: 'pattern'; tokens: Token[] };

/** One step of a segment pattern: `*`, or something that matches exactly one character (code point). */
type Token =
  | { kind: 'star' }
  | { kind: 'any' }
  | { kind: 'char'; codePoint: number }
  | { kind: 'class'; regex: RegExp };

const META = /[*?[\\]/;

/**
 * Steps taken by the matchers since the process started: each pass of a matching loop adds one.
 * Read by the tests, which hold matching to its polynomial bound by counting work, not time.
 */
export const globWork = { steps: 0 };

export function compileGlob(pattern: string): (relativePath: string) => boolean {
  const segments = parseSegments(pattern);
  return (relativePath) => matchSegments(segments, relativePath.split('/'));
}

/** Relative (posix) paths of the files under `root` matching any pattern: unique and sorted. */
export async function globFiles(patterns: readonly string[], root: string): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of patterns) {
    const segments = parseSegments(pattern);
    const literalPrefix: string[] = [];
    for (const segment of segments) {
      if (segment.kind !== 'literal') break;
      literalPrefix.push(segment.text);
    }
    const start = literalPrefix.join('/');
    if (start.split('/').includes('..')) continue;
    const maxDepth = segments.some((s) => s.kind === 'globstar') ? Number.POSITIVE_INFINITY : segments.length;
    for await (const file of walk(root, start, literalPrefix.length, maxDepth)) {
      if (matchSegments(segments, file.split('/'))) found.add(file);
    }
  }
  return [...found].sort(compareBytes);
}

function compareBytes(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function* walk(root: string, relDir: string, depth: number, maxDepth: number): AsyncGenerator<string> {
  if (depth > maxDepth) return;
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fsPromises().readdir(path.join(root, relDir), { withFileTypes: true });
  } catch {
    // The literal prefix may name a file rather than a directory.
    if (relDir !== '') yield relDir;
    return;
  }
  for (const entry of entries) {
    const rel = relDir === '' ? entry.name : `${relDir}/${entry.name}`;
    if (entry.isDirectory()) yield* walk(root, rel, depth + 1, maxDepth);
    else yield rel;
  }
}

function parseSegments(pattern: string): Segment[] {
  const parts = pattern
    .replace(/^\.\//, '')
    .replace(/^\/+/, '')
    .split('/')
    .filter((part) => part !== '' && part !== '.');
  if (parts.length === 0) throw new GlobError(`invalid glob pattern "${pattern}": empty`);
  return parts.map((part): Segment => {
    if (part === '**') return { kind: 'globstar' };
    if (!META.test(part)) return { kind: 'literal', text: part };
    return { kind: 'pattern', tokens: segmentTokens(part, pattern) };
  });
}

/** A segment's tokens: each `?`, class and character matches one code point, as the `u` regex did. */
function segmentTokens(segment: string, pattern: string): Token[] {
  const tokens: Token[] = [];
  let literal = '';
  const flush = (): void => {
    for (const char of literal) tokens.push({ kind: 'char', codePoint: char.codePointAt(0)! });
    literal = '';
  };
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i] as string;
    if (char === '\\') {
      const next = segment[++i];
      if (next === undefined) throw new GlobError(`invalid glob pattern "${pattern}": trailing "\\"`);
      literal += next;
      continue;
    }
    if (char !== '*' && char !== '?' && char !== '[') {
      literal += char;
      continue;
    }
    flush();
    if (char === '*') {
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (char === '?') tokens.push({ kind: 'any' });
    else {
      const close = segment.indexOf(']', i + 2);
      if (close === -1) throw new GlobError(`invalid glob pattern "${pattern}": unclosed "["`);
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      // A class alone, tested on one character: no quantifier, so no backtracking.
      const regex = new RegExp(`^[${negated ? '^' : ''}${body.replace(/[\]\\^]/g, '\\$&')}]$`, 'u');
      tokens.push({ kind: 'class', regex });
      i = close;
    }
  }
  flush();
  return tokens;
}

function matchesOne(token: Token, codePoint: number): boolean {
  if (token.kind === 'any') return true;
  if (token.kind === 'char') return token.codePoint === codePoint;
  return token.kind === 'class' && token.regex.test(String.fromCodePoint(codePoint));
}

/** `wildcardMatch` over the name's code points, read in place (no array per name). */
function matchName(tokens: readonly Token[], name: string): boolean {
  let t = 0;
  let i = 0;
  let star = -1;
  let resume = 0;
  while (i < name.length) {
    globWork.steps++;
    const token = tokens[t];
    const codePoint = name.codePointAt(i)!;
    if (token?.kind === 'star') {
      star = t++;
      resume = i;
    } else if (token !== undefined && matchesOne(token, codePoint)) {
      t++;
      i += codePoint > 0xffff ? 2 : 1;
    } else if (star >= 0) {
      t = star + 1;
      resume += name.codePointAt(resume)! > 0xffff ? 2 : 1;
      i = resume;
    } else return false;
  }
  while (tokens[t]?.kind === 'star') t++;
  return t === tokens.length;
}

function matchSegments(segments: readonly Segment[], parts: readonly string[]): boolean {
  return wildcardMatch(
    segments,
    parts,
    (segment) => segment.kind === 'globstar',
    (segment, part) =>
      segment.kind === 'literal'
        ? segment.text === part
        : segment.kind === 'pattern' && matchName(segment.tokens, part),
  );
}

/**
 * Whether `items` match `pattern`, where a star matches any run of items and every other step
 * exactly one (`matches`). Greedy, going back only to the last star seen: a later star can match
 * whatever an earlier one would have left over, so earlier choices never need retrying. At most
 * items × pattern steps, where a backtracking matcher (a regex, or a recursion over `**`s) took
 * exponential time.
 */
function wildcardMatch<P, I>(
  pattern: readonly P[],
  items: readonly I[],
  isStar: (step: P) => boolean,
  matches: (step: P, item: I) => boolean,
): boolean {
  let p = 0;
  let i = 0;
  let star = -1; // the last star's index in `pattern`
  let resume = 0; // the first item that star has not swallowed yet
  while (i < items.length) {
    globWork.steps++;
    const step = pattern[p];
    if (step !== undefined && isStar(step)) {
      star = p++;
      resume = i;
    } else if (step !== undefined && matches(step, items[i] as I)) {
      p++;
      i++;
    } else if (star >= 0) {
      p = star + 1;
      i = ++resume;
    } else return false;
  }
  while (p < pattern.length && isStar(pattern[p] as P)) p++;
  return p === pattern.length;
}
