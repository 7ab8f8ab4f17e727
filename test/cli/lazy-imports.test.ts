import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, tempHome } from './run-axe.js';

/** Runs the built CLI with a module-resolution hook that records every package it imports. */
function importedPackages(args: string[]): string[] {
  const { home, cwd, env, configDir } = tempHome();
  mkdirSync(join(configDir, 'agents'), { recursive: true });
  writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n');
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
  writeFileSync(log, '');
  const result = spawnSync(process.execPath, ['--import', register, CLI, ...args], {
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
});
