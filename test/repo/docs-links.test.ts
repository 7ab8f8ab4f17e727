import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The README, ARCHITECTURE.md and every page of docs/, relative to the repository. */
const PAGES = [
  'README.md',
  'ARCHITECTURE.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const read = (page: string): string => readFileSync(join(repoRoot, page), 'utf8');

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as `-`. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function anchors(page: string): Set<string> {
  const prose = read(page).replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...prose.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchor(match[1] as string)));
}

/** The relative links of a page's prose (code blocks left out), as `[text](target)` writes them. */
function links(page: string): string[] {
  const prose = read(page).replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z]+:/.test(target));
}

describe('the docs hold together', () => {
  it('every relative link of the README, ARCHITECTURE.md and docs/ reaches a file, and its heading', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const target of links(page)) {
        const [path = '', hash] = target.split('#');
        const file = path === '' ? page : normalize(join(dirname(page), path));
        if (!existsSync(join(repoRoot, file))) broken.push(`${page}: ${target} (no ${file})`);
        else if (hash !== undefined && file.endsWith('.md') && !anchors(file).has(hash)) {
          broken.push(`${page}: ${target} (no heading "${hash}" in ${file})`);
        }
      }
    }
    expect(PAGES.length).toBeGreaterThanOrEqual(12);
    expect(broken).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(links('README.md').map((target) => normalize(target.split('#')[0] ?? '')));
    const pages = PAGES.filter((page) => page.startsWith('docs/'));
    expect(pages.filter((page) => !linked.has(relative('.', page)))).toEqual([]);
  });
});
