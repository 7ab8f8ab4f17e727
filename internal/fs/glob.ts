import path from 'node:path';
import { fsPromises } from './promises.js';

/**
 * A small glob for `files = [...]` (Node 20 has no fs.glob). Segments are matched like Go's
 * filepath.Match (`*`, `?`, `[a-z]`, `[^x]`, `\` escapes; `*` never crosses `/`), and a `**`
 * segment matches zero or more directories.
 */
export class GlobError extends Error {}

type Segment = { kind: 'globstar' } | { kind: 'literal'; text: string } | { kind: 'pattern'; regex: RegExp };

const META = /[*?[\\]/;

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
    return { kind: 'pattern', regex: segmentRegex(part, pattern) };
  });
}

function segmentRegex(segment: string, pattern: string): RegExp {
  let source = '';
  for (let i = 0; i < segment.length; i++) {
    const char = segment[i] as string;
    if (char === '*') source += '[^/]*';
    else if (char === '?') source += '[^/]';
    else if (char === '\\') {
      const next = segment[++i];
      if (next === undefined) throw new GlobError(`invalid glob pattern "${pattern}": trailing "\\"`);
      source += escapeRegex(next);
    } else if (char === '[') {
      const close = segment.indexOf(']', i + 2);
      if (close === -1) throw new GlobError(`invalid glob pattern "${pattern}": unclosed "["`);
      let body = segment.slice(i + 1, close);
      const negated = body.startsWith('^') || body.startsWith('!');
      if (negated) body = body.slice(1);
      source += `[${negated ? '^' : ''}${body.replace(/[\]\\^]/g, '\\$&')}]`;
      i = close;
    } else source += escapeRegex(char);
  }
  return new RegExp(`^${source}$`, 'u');
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function matchSegments(segments: readonly Segment[], parts: readonly string[]): boolean {
  const [first, ...rest] = segments;
  if (first === undefined) return parts.length === 0;
  if (first.kind === 'globstar') {
    for (let skip = 0; skip <= parts.length; skip++) {
      if (matchSegments(rest, parts.slice(skip))) return true;
    }
    return false;
  }
  const [part, ...remaining] = parts;
  if (part === undefined) return false;
  const ok = first.kind === 'literal' ? first.text === part : first.regex.test(part);
  return ok && matchSegments(rest, remaining);
}
