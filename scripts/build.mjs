// Bundles the CLI with esbuild. Code splitting keeps every command's module (and the heavy
// dependencies it imports) in its own chunk, loaded only when that command runs.
import { chmodSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

rmSync('dist', { recursive: true, force: true });
await build({
  entryPoints: { main: 'cmd/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: false,
  banner: { js: '#!/usr/bin/env node' },
  logLevel: 'warning',
});
chmodSync('dist/main.js', 0o755);
