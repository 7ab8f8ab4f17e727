import { describe, expect, it } from 'vitest';
import { summarizeToolCall } from '../../internal/tools/index.js';

/** The `<summary>` of `[tool] <name>: <summary> (success|error)`, as Go axe words it. */
const ok = (content: string) => ({ content, isError: false });
const failed = (content: string) => ({ content, isError: true });

describe('summarizeToolCall', () => {
  it.each([
    ['read_file', { path: 'a "b".txt' }, ok('1: x\n2: y'), 'path "a \\"b\\".txt" (2 lines)'],
    ['read_file', { path: 'x' }, failed('path "x" does not exist'), 'path "x": path "x" does not exist'],
    ['list_directory', { path: '.' }, ok('a\nb/'), 'path "."'],
    ['write_file', { path: 'é.txt', content: 'é' }, ok('wrote 2 bytes to é.txt'), 'path "é.txt" (2 bytes)'],
    ['edit_file', { path: 'f' }, ok('replaced 2 occurrences in f'), 'path "f" (replaced 2 occurrences in f)'],
    ['run_command', { command: 'make' }, ok(''), '"make" (exit 0)'],
    ['run_command', { command: 'make' }, failed('exit code 2\nboom'), '"make" (exit 2)'],
    ['run_command', { command: 'x' }, failed('killed by SIGKILL\n'), '"x" (killed by SIGKILL)'],
    ['run_command', { command: 'x' }, failed('command rejected: no'), '"x" (command rejected: no)'],
    ['run_command', { command: 'y'.repeat(70) }, ok(''), `"${'y'.repeat(60)}..." (exit 0)`],
    ['url_fetch', { url: 'https://h.test/p?token=s' }, ok('hello'), 'url "https://h.test/p" (5 chars)'],
    ['url_fetch', { url: 'https://h.test/' }, failed('HTTP 404: gone'), 'url "https://h.test/" (HTTP 404)'],
    ['url_fetch', { url: 'nope' }, failed('invalid url "nope"'), 'url "invalid-url": invalid url "nope"'],
    ['web_search', { query: 'q' }, ok('Title: t'), 'query "q"'],
    [
      'web_search',
      { query: 'q' },
      failed('TAVILY_API_KEY environment variable is not set'),
      'query "q": TAVILY_API_KEY environment variable is not set',
    ],
    [
      'glob_files',
      { pattern: '**/*.ts' },
      ok('a.ts\nb.ts\n(3 more not shown: narrow the pattern)'),
      'pattern "**/*.ts" (2 files)',
    ],
    ['glob_files', { pattern: '*.rs' }, ok('no files match "*.rs"'), 'pattern "*.rs" (0 files)'],
    ['grep_files', { pattern: 'x' }, ok('a.ts:1: x'), 'pattern "x" (1 lines)'],
    [
      'grep_files',
      { pattern: '(' },
      failed('invalid regular expression'),
      'pattern "(": invalid regular expression',
    ],
    ['get-sum', { a: 1 }, ok('2'), '{"a":1}'],
  ] as const)('%s %j', (name, input, output, summary) => {
    expect(summarizeToolCall(name, input, output)).toBe(summary);
  });
});
