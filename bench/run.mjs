// `npm run bench`: bundles each bench/*.bench.ts with esbuild and runs them one after another, so
// every figure is measured on the same machine in the same run. Each bench prints its own table.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const only = process.argv.slice(2);
const benches = readdirSync('bench')
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.includes(o)))
  .sort();
// Inside node_modules so the bundles resolve the project's packages.
const outdir = mkdtempSync(join(process.cwd(), 'node_modules', '.axe-bench-'));
try {
  await build({
    entryPoints: benches.map((f) => join('bench', f)),
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    outExtension: { '.js': '.mjs' },
    logLevel: 'warning',
  });
  // The fake server reads its vendored request schemas next to its module: next to the bundles.
  cpSync(join('test', 'fake-llm', 'vendor'), join(outdir, 'vendor'), { recursive: true });
  for (const file of benches) {
    const out = join(outdir, file.replace(/\.ts$/, '.mjs'));
    process.stdout.write(`\n## ${file}\n`);
    execFileSync(process.execPath, ['--expose-gc', out], {
      stdio: 'inherit',
      env: { ...process.env, AXE_REPO: process.cwd() },
    });
  }
} finally {
  rmSync(outdir, { recursive: true, force: true });
}
