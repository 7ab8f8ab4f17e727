import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, sourceFiles } from './source-files.js';

/** The section sign, written as an escape so that this file does not cite anything itself. */
const SECTION = '\u00a7';
const RFC_CITATION = new RegExp(`RFC \\d+ ${SECTION}`, 'g');

/**
 * The lines with a section sign outside an RFC citation (`RFC 9112` then the sign and `6.3`): a
 * pointer into a design document that readers of the code do not have. A comment says what it
 * means instead.
 */
function sectionCitations(source: string): number[] {
  return source
    .split('\n')
    .flatMap((line, index) => (line.replace(RFC_CITATION, '').includes(SECTION) ? [index + 1] : []));
}

describe('the code cites no design-document sections', () => {
  it('tells an RFC citation from any other', () => {
    const source = [
      `// RFC 9112 ${SECTION}6.1: closed after.`,
      `// as ${SECTION}5.7 says`,
      `it('(${SECTION}3.8)', () => {});`,
    ].join('\n');
    expect(sectionCitations(source)).toEqual([2, 3]);
  });

  it('has none in cmd/, internal/, test/, bench/ or scripts/', () => {
    const files = sourceFiles(['cmd', 'internal', 'test', 'bench', 'scripts']);
    expect(files.length).toBeGreaterThan(300);
    const found = files.flatMap((file) =>
      sectionCitations(readFileSync(path.join(repoRoot, file), 'utf8')).map((line) => `${file}:${line}`),
    );
    expect(found).toEqual([]);
  });
});
