import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './source-files.js';

const architecture = readFileSync(join(repoRoot, 'ARCHITECTURE.md'), 'utf8');

/** The folders named by a row of the rooms table: `| \`internal/fs/\` | … |` gives `internal/fs/`. */
function tableFolders(page: string): Set<string> {
  return new Set([...page.matchAll(/^\| `([a-z/*.-]+)` +\|/gm)].map((match) => match[1] as string));
}

/**
 * The module files the page names with their folder (`runner/loop.ts`, `cmd/run.ts`), as
 * repository paths: a name without `cmd/` or `internal/` in front is one under internal/.
 */
function namedModules(page: string): string[] {
  const names = [...page.matchAll(/`((?:[a-z-]+\/)+[a-z-]+\.ts)`/g)].map((match) => match[1] as string);
  return [...new Set(names)].map((name) =>
    name.startsWith('cmd/') || name.startsWith('internal/') ? name : `internal/${name}`,
  );
}

describe('ARCHITECTURE.md', () => {
  it('gives every folder of internal/ a row of its rooms table', () => {
    const folders = readdirSync(join(repoRoot, 'internal'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => `internal/${entry.name}/`);
    expect(folders.length).toBeGreaterThan(10);
    const named = tableFolders(architecture);
    expect(folders.filter((folder) => !named.has(folder))).toEqual([]);
  });

  it('names only modules that exist', () => {
    const modules = namedModules(architecture);
    expect(modules.length).toBeGreaterThan(20);
    expect(modules.filter((module) => !existsSync(join(repoRoot, module)))).toEqual([]);
  });

  it('reads the table rows and module names as they are written', () => {
    const page = [
      '| `internal/fs/`   | Safe files. |',
      '| `cmd/`           | The CLI. |',
      'Not a row: `internal/http/`.',
      'See `runner/loop.ts`, `cmd/run.ts`, `internal/errors.ts`, `tools/mcp/index.ts` and `ollama.ts`.',
    ].join('\n');
    expect([...tableFolders(page)]).toEqual(['internal/fs/', 'cmd/']);
    expect(namedModules(page)).toEqual([
      'internal/runner/loop.ts',
      'cmd/run.ts',
      'internal/errors.ts',
      'internal/tools/mcp/index.ts',
    ]);
  });
});
