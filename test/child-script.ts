import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * `contents` (TypeScript whose imports are relative to the repository's root, e.g.
 * `./internal/http/pool.ts`) bundled into `<dir>/<name>`, for a child process to run with node:
 * what a test needs of the real code in another process (another environment, a race between
 * processes). The path of the script.
 */
export async function childScript(contents: string, dir: string, name: string): Promise<string> {
  const bundled = await build({
    stdin: { contents, resolveDir: ROOT, loader: 'ts' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    logLevel: 'silent',
  });
  const script = join(dir, name);
  writeFileSync(script, bundled.outputFiles[0]?.text ?? '');
  return script;
}
