import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_LINE_CHARS } from '../../internal/tools/grep-files.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { type CountingServer, startCountingServer } from './counting-server.js';
import { call, makeSandbox, toolContext } from './helpers.js';

/**
 * Tools that cut a long text cut it between characters, never inside an emoji's surrogate pair: a
 * lone surrogate in a tool result makes the next request unsendable (Anthropic answers 400 "no low
 * surrogate in string").
 */
const { grep_files, url_fetch } = BUILTIN_TOOLS;
/** No lone surrogate (String.prototype.isWellFormed: Node 20 has it, the project's TypeScript lib not). */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();
const MARKER = '\n... [response truncated, exceeded 10000 characters]';

describe('url_fetch cutting at 10 000 characters', () => {
  let server: CountingServer;
  beforeAll(async () => {
    server = await startCountingServer((req, res) => {
      const body = `${'a'.repeat(9_999)}😀 tail`;
      if (req.url === '/page.html') {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<p>${body}</p>`);
      } else {
        res.setHeader('content-type', 'text/plain; charset=utf-8');
        res.end(body);
      }
    });
  });
  afterAll(() => server.close());
  const ctx = () => toolContext('/tmp', { env: { AXE_ALLOW_PRIVATE_HOSTS: '1' } });

  for (const path of ['/page.txt', '/page.html']) {
    it(`ends before an emoji the limit falls inside (${path})`, async () => {
      const out = await call(url_fetch, { url: `${server.url}${path}` }, ctx());
      expect(out.isError).toBe(false);
      expect(isWellFormed(out.content)).toBe(true);
      expect(out.content).toBe(`${'a'.repeat(9_999)}${MARKER}`);
    });
  }
});

describe('grep_files cutting a long line', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  it(`ends before an emoji the ${MAX_LINE_CHARS}-character limit falls inside`, async () => {
    const box = makeSandbox();
    cleanups.push(box.cleanup);
    writeFileSync(join(box.workdir, 'emoji.txt'), `${'b'.repeat(MAX_LINE_CHARS - 1)}😀 and more text\n`);
    const out = await call(grep_files, { pattern: '^b' }, toolContext(box.workdir));
    expect(out.isError).toBe(false);
    expect(isWellFormed(out.content)).toBe(true);
    expect(out.content).toBe(`emoji.txt:1: ${'b'.repeat(MAX_LINE_CHARS - 1)}…`);
  });
});
