// Bundles the CLI with esbuild into CommonJS files: dist/main.js, the small executable, and the
// CLI bundles of internal/startup/bundle.ts — dist/cli.js, every command, and smaller ones for the
// commands started most often —, which main.js runs from V8's code cache
// (internal/startup/code-cache.ts). A bundle compiles once and is cached whole; lazily loaded ES
// chunks cannot be cached on Node 20.
// The heavy packages stay outside, required by the code that needs them.
// The bundle is written to a fresh folder and swapped in, so an `axe` already running from dist/
// (a test, a second terminal) never sees a half-written build.
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const common = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // cac and smol-toml are bundled: nearly every command needs them, and resolving a package
  // through node_modules at start costs more than their few KB.
  external: [
    '@modelcontextprotocol/sdk',
    '@pydantic/genai-prices',
    'ajv',
    'csv-parse',
    'pg',
    'pg-boss',
    'undici',
    'yaml',
  ],
  // ASCII only (the default, said here because code-cache.ts reads the bundle as latin1).
  charset: 'ascii',
  sourcemap: false,
  // Whitespace and syntax only (names are kept, for stack traces): a quarter less to read and hash.
  minifyWhitespace: true,
  minifySyntax: true,
  logLevel: 'warning',
};

/**
 * Traces (internal/telemetry/export.ts and the OpenTelemetry SDK it uses) are a bundle of their own,
 * dist/telemetry.js, required by the CLI only when an OTEL_ variable asks for traces: one file
 * loads in a third of the time the SDK's few hundred files in node_modules take, and a run that is
 * not traced reads none of it.
 */
const TELEMETRY_ENTRY = 'internal/telemetry/export.ts';
const telemetryApart = {
  name: 'telemetry-apart',
  setup(build) {
    build.onResolve({ filter: /\/telemetry\/export\.js$/ }, () => ({
      path: './telemetry.js',
      external: true,
    }));
  },
};

const staging = mkdtempSync('dist-build-');
try {
  // mkdtemp makes the folder 0700: dist/ must be readable by every user of a shared install.
  chmodSync(staging, 0o755);
  const id = createHash('sha256');
  // As internal/startup/bundle.ts names them.
  for (const [bundle, name] of [
    ['all', 'cli'],
    ['run', 'cli-run'],
    ['agent-files', 'cli-agent-files'],
  ]) {
    await build({
      ...common,
      entryPoints: { [name]: 'cmd/cli.ts' },
      outdir: staging,
      plugins: [telemetryApart],
      // import.meta does not exist in CommonJS: the module's file is the bundle's.
      define: {
        'import.meta.filename': '__filename',
        'import.meta.dirname': '__dirname',
        AXE_BUNDLE: JSON.stringify(bundle),
      },
      // A script run from the code cache has no import(): the packages are require()d when needed.
      supported: { 'dynamic-import': false },
      // A function expression of CommonJS's five names, which main.js compiles as it is and calls
      // (code-cache.ts): not runnable on its own.
      banner: {
        js: '(function (exports, require, module, __filename, __dirname) {',
      },
      footer: { js: '\n})' },
    });
    const cli = readFileSync(`${staging}/${name}.js`);
    // main.js reads it as latin1: a byte over 0x7f would be read wrong.
    const nonAscii = cli.findIndex((byte) => byte > 0x7f);
    if (nonAscii !== -1) throw new Error(`dist/${name}.js: a non-ASCII byte at offset ${nonAscii}`);
    id.update(cli);
  }
  await build({
    ...common,
    entryPoints: { telemetry: TELEMETRY_ENTRY },
    outdir: staging,
    external: [],
    define: { 'import.meta.filename': '__filename', 'import.meta.dirname': '__dirname' },
    minifyIdentifiers: true,
  });
  const cliId = id.digest('hex').slice(0, 16);
  await build({
    ...common,
    entryPoints: { main: 'cmd/main.ts' },
    outdir: staging,
    define: { AXE_CLI_ID: JSON.stringify(cliId) },
    banner: { js: '#!/usr/bin/env node' },
  });
  // The project is ESM ("type": "module"); the bundles are CommonJS.
  writeFileSync(`${staging}/package.json`, '{ "type": "commonjs" }\n');
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
