import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, tempHome } from './run-axe.js';

/**
 * Runs the built CLI with a module-resolution hook and a `require` hook that record every package
 * it imports or requires (the CLI bundle is CommonJS: it requires its packages).
 */
function importedPackages(
  args: string[],
  agentFile = 'a.toml',
  text = 'name = "a"\nmodel = "a/b"\n',
): string[] {
  const { home, cwd, env, configDir } = tempHome();
  mkdirSync(join(configDir, 'agents'), { recursive: true });
  writeFileSync(join(configDir, 'agents', agentFile), text);
  const log = join(home, 'imports.log');
  const hooks = join(home, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\nexport async function resolve(specifier, context, next) {\n  if (!specifier.startsWith('.') && !specifier.startsWith('node:') && !specifier.startsWith('file:')) appendFileSync(${JSON.stringify(log)}, specifier + '\\n');\n  return next(specifier, context);\n}\n`,
  );
  const register = join(home, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`file://${hooks}`)});\n`,
  );
  const requireHook = join(home, 'require-hook.cjs');
  writeFileSync(
    requireHook,
    `const Module = require('node:module');\nconst load = Module._load;\nModule._load = function (request, ...rest) {\n  if (!request.startsWith('.') && !request.startsWith('/') && !Module.isBuiltin(request)) require('node:fs').appendFileSync(${JSON.stringify(log)}, request + '\\n');\n  return load.call(this, request, ...rest);\n};\n`,
  );
  writeFileSync(log, '');
  const result = spawnSync(process.execPath, ['--import', register, '--require', requireHook, CLI, ...args], {
    cwd,
    env,
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return [...new Set(readFileSync(log, 'utf8').split('\n').filter(Boolean))].sort();
}

describe('heavy modules load only when needed', () => {
  it('axe version imports no package at all (not even cac)', () => {
    expect(importedPackages(['version'])).toEqual([]);
  });

  it('axe agents list over TOML files imports no package (cac and smol-toml are bundled): no ajv, yaml, undici or MCP SDK', () => {
    expect(importedPackages(['agents', 'list'])).toEqual([]);
  });

  it('the hooks see a package the CLI does load: yaml for a YAML agent file, and nothing else', () => {
    expect(importedPackages(['agents', 'list'], 'a.yaml', 'name: a\nmodel: a/b\n')).toEqual(['yaml']);
  });
});
