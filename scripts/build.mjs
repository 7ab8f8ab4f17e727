// Bundles the CLI with esbuild. Code splitting keeps every command's module (and the heavy
// dependencies it imports) in its own chunk, loaded only when that command runs.
// The bundle is written to a fresh folder and swapped in, so an `axe` already running from dist/
// (a test, a second terminal) never sees a half-written build.
import { chmodSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const staging = mkdtempSync('dist-build-');
try {
  // mkdtemp makes the folder 0700: dist/ must be readable by every user of a shared install.
  chmodSync(staging, 0o755);
  await build({
    entryPoints: { main: 'cmd/main.ts' },
    outdir: staging,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // cac and smol-toml are bundled: nearly every command needs them, and resolving a package
    // through node_modules at start costs more than their few KB (one turn: ~15 ms less). The
    // heavy ones stay outside, imported lazily by the commands and tools that need them.
    external: ['@modelcontextprotocol/sdk', 'ajv', 'undici', 'yaml'],
    sourcemap: false,
    banner: { js: '#!/usr/bin/env node' },
    logLevel: 'warning',
  });
  chmodSync(`${staging}/main.js`, 0o755);
  const previous = `${staging}-old`;
  try {
    renameSync('dist', previous);
  } catch {
    // first build
  }
  renameSync(staging, 'dist');
  rmSync(previous, { recursive: true, force: true });
} finally {
  rmSync(staging, { recursive: true, force: true });
}
