import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, with a trailing `/`. */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Every .ts file under `dirs` (repository-relative, `/`-separated), sorted. */
export function sourceFiles(dirs: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(repoRoot, dir), { withFileTypes: true })) {
      const child = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(child);
      else if (entry.name.endsWith('.ts')) found.push(child);
    }
  };
  for (const dir of dirs) walk(dir);
  return found.sort();
}
