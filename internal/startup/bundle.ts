import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { Script } from 'node:vm';

/**
 * The CLI's bundles (scripts/build.mjs): every command in dist/cli.js, and smaller ones for the
 * commands started most often, so that they read and load less of the CLI: `run`, and `agents`
 * with `validate` (both read agent files). main.js picks one by the command; a command that
 * turns out to be outside it (a flag's value read as the command) runs from the full one.
 */
export type Bundle = 'all' | 'run' | 'agent-files';

export function bundleFile(bundle: Bundle): string {
  return bundle === 'all' ? 'cli.js' : `cli-${bundle}.js`;
}

/** The commands that get a code cache of their own: each compiles a different part of the CLI. */
const COMMANDS = new Set([
  'run',
  'agents',
  'validate',
  'runs',
  'batches',
  'worker',
  'gc',
  'config',
  'models',
]);

/** The command argv names: its first word that is not a flag, or `other`. */
export function commandOf(argv: readonly string[]): string {
  const first = argv.find((arg) => !arg.startsWith('-')) ?? '';
  return COMMANDS.has(first) ? first : 'other';
}

export function bundleOf(command: string): Bundle {
  if (command === 'run') return 'run';
  if (command === 'agents' || command === 'validate') return 'agent-files';
  return 'all';
}

/**
 * Runs the bundle `script` was compiled from (`file`): each is a function expression of CommonJS's
 * five names (scripts/build.mjs), called here as Node calls a module's wrapper.
 */
export function callBundle(script: Script, file: string): void {
  const module = { exports: {} };
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run(module.exports, createRequire(file), module, file, dirname(file));
}
