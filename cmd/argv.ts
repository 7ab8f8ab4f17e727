import { ConfigError } from '../internal/errors.js';

/** Option values as the user typed them (cac turns numeric-looking strings into numbers). */

/**
 * The values of a string option as typed. cac turns numeric-looking values into numbers
 * (`-p 1e3` → 1000, `--agents-dir 007` → 7), so they are read from argv; cac's parse is the
 * fallback for forms this scan does not know (combined short flags).
 */
function rawValues(argv: string[], parsed: unknown, names: string[]): string[] {
  if (parsed === undefined) return [];
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const inline = names.find((name) => name.startsWith('--') && arg.startsWith(`${name}=`));
    if (inline) values.push(arg.slice(inline.length + 1));
    else if (names.includes(arg) && i + 1 < argv.length) values.push(argv[++i] ?? '');
  }
  if (values.length > 0) return values;
  const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return list.filter((v) => typeof v !== 'boolean').map(String);
}

export function lastValue(argv: string[], parsed: unknown, names: string[]): string | undefined {
  return rawValues(argv, parsed, names).at(-1);
}

/** Every `--agents-dir` given, in order, exactly as typed. */
export function agentsDirFlags(options: Record<string, unknown>): string[] {
  return rawValues(process.argv.slice(2), options.agentsDir, ['--agents-dir']);
}

/** Every `--input name=value` given, in order, exactly as typed. */
export function inputFlags(options: Record<string, unknown>): string[] {
  return rawValues(process.argv.slice(2), options.input, ['--input']);
}

/** Options that may be given several times, every value kept (in order). */
const REPEATABLE = new Set(['agentsDir', 'input', '--']);

/**
 * One meaning for a flag however it is written. Repeated: the last one wins, as in Go axe (cac
 * gives `[true, true]` for `--dry-run --dry-run` and `['a', 'b']` for `--model a --model b`),
 * except the repeatable ones. A switch given a value (`--dry-run=true`, `--json=false`, Go's
 * forms) is that boolean; any other value is a usage error, never a switch silently off.
 */
export function lastWins(
  options: Record<string, unknown>,
  switches: ReadonlySet<string>,
): Record<string, unknown> {
  const normalized: Record<string, unknown> = {};
  for (const [key, given] of Object.entries(options)) {
    const value = Array.isArray(given) && !REPEATABLE.has(key) ? given.at(-1) : given;
    normalized[key] = switches.has(key) ? switchValue(key, value) : value;
  }
  return normalized;
}

export function switchValue(key: string, value: unknown): unknown {
  if (typeof value === 'boolean' || value === undefined) return value;
  const text = String(value).toLowerCase();
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  const flag = `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
  throw new ConfigError(`${flag}: expected true or false, got "${String(value)}"`);
}

/**
 * `--timeout -1`: a value flag takes the next word as its value even when it looks like a negative
 * number (cac would read `-1` as a flag), so the value is checked and reported as a bad value;
 * likewise `-` (`--events -`: stderr), which cac reads as no value. Every long flag but those in
 * `takesNoValue` (switches, and flags whose value is optional) and negations (`--no-stream`) does
 * so: a flag the command does not know is then refused by its name, not as `-1`.
 */
export function joinNegativeValues(argv: string[], takesNoValue: ReadonlySet<string>): string[] {
  const joined: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const next = argv[i + 1];
    if (arg === '--') return [...joined, ...argv.slice(i)];
    const flag = /^--[\w-]+$/.test(arg) && !arg.startsWith('--no-') && !takesNoValue.has(arg);
    if (flag && next !== undefined && /^-\d|^-\.\d|^-$/.test(next)) {
      joined.push(`${arg}=${next}`);
      i++;
    } else {
      joined.push(arg);
    }
  }
  return joined;
}

/**
 * `--json=1`, `--verbose=TRUE`: Go's values of a switch, made `true` or `false` before cac reads
 * them. cac keeps only those two, and takes any other value for one more argument of the command
 * ("Unused args"); a value that is no boolean is said as such here.
 */
export function switchValuesAsBooleans(argv: string[], switches: ReadonlySet<string>): string[] {
  const end = argv.indexOf('--');
  return argv.map((arg, i) => {
    const given = end !== -1 && i > end ? null : /^--([a-z][a-z-]*)=(.*)$/s.exec(arg);
    const key = given ? camelCase(given[1] as string) : '';
    if (!given || !switches.has(key)) return arg;
    return `--${given[1]}=${String(switchValue(key, given[2]))}`;
  });
}

function camelCase(name: string): string {
  return name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * cac reports `--bogusFlag` for `--bogus-flag`, and `--suchOpt` for `--no-such-opt` (a negation
 * it files under the name without `no-`): find the flag as the user typed it.
 */
export function flagAsTyped(reported: string, argv: string[]): string {
  const key = reported.replace(/^-+/, '');
  const typed = argv.find((arg) => {
    if (!arg.startsWith('-')) return false;
    const name = arg.replace(/^-+/, '').split('=')[0] ?? '';
    return camelCase(name) === key || (name.startsWith('no-') && camelCase(name.slice(3)) === key);
  });
  return typed?.split('=')[0] ?? reported;
}

/**
 * `-p`, or the words after the agent's name (`axe run lead "review this"`), which stand for it:
 * a blank prompt counts as none; the flag without a message is an error, and so are both at once.
 */
export function promptOf(argv: string[], parsed: unknown, words: string[]): string | undefined {
  if (typeof parsed === 'boolean') throw new ConfigError('-p/--prompt: expected a message after the flag');
  const flag = lastValue(argv, parsed, ['-p', '--prompt']);
  if (flag !== undefined && words.length > 0) {
    throw new ConfigError(
      `-p and a prompt after the agent's name ("${words.join(' ')}") cannot be used together: give one`,
    );
  }
  const prompt = flag ?? (words.length > 0 ? words.join(' ') : undefined);
  return prompt === undefined || prompt.trim() === '' ? undefined : prompt;
}

/**
 * `axe run … --json` (or `--output-format json`, `--json=true`): a usage error found before the run
 * starts is then printed as the run's JSON failure too, as scripts read stdout. A dry run and
 * `--map` print no run object, so they are left out; a switch value that is no boolean counts as off.
 */
export function runWantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  const args = end === -1 ? argv : argv.slice(0, end);
  let json = false;
  let format: string | undefined;
  for (const [i, arg] of args.entries()) {
    const [name, value] = arg.startsWith('--') && arg.includes('=') ? splitAtEquals(arg) : [arg, undefined];
    if (name === '--dry-run' || name === '--map') return false;
    if (name === '--json') json = value === undefined || ['true', '1'].includes(value.toLowerCase());
    if (name === '--output-format') format = value ?? args[i + 1];
  }
  return json || format === 'json';
}

function splitAtEquals(arg: string): [string, string] {
  const at = arg.indexOf('=');
  return [arg.slice(0, at), arg.slice(at + 1)];
}

export function positiveNumberFlag(value: unknown, flag: string, expected: string): number | undefined {
  if (value === undefined) return undefined;
  const number = typeof value === 'number' ? value : Number.NaN;
  if (!Number.isFinite(number) || number <= 0) throw badFlag(flag, expected, value);
  return number;
}

/**
 * A count as typed (cac would read `0x10`, `0b11` and `1e308` as numbers): plain decimal digits
 * only, above zero and small enough to count exactly.
 */
export function positiveIntegerFlag(
  typed: string | undefined,
  flag: string,
  expected: string,
): number | undefined {
  if (typed === undefined) return undefined;
  const number = /^\d+$/.test(typed) ? Number(typed) : Number.NaN;
  if (!Number.isSafeInteger(number) || number <= 0) throw badFlag(flag, expected, typed);
  return number;
}

function badFlag(flag: string, expected: string, value: unknown): ConfigError {
  return new ConfigError(`${flag}: expected ${expected}, got "${String(value)}"`);
}

/** A flag that takes a value, as typed the last time it was given; undefined when not given. */
export function stringFlag(argv: string[], value: unknown, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'boolean') throw new ConfigError(`${flag}: expected a value after the flag`);
  return lastValue(argv, value, [flag]);
}

/** A positive whole number as typed (plain decimal digits). */
export function countFlag(argv: string[], value: unknown, flag: string): number | undefined {
  return positiveIntegerFlag(stringFlag(argv, value, flag), flag, 'a positive whole number');
}

/**
 * The first of `flags` (each its option key, then the flag as typed, then anything the caller
 * keeps with it) given on the command line: a flag counts unless absent or switched off.
 */
export function firstGiven<T extends readonly [string, string, ...string[]]>(
  options: Record<string, unknown>,
  flags: readonly T[],
): T | undefined {
  return flags.find(([key]) => options[key] !== undefined && options[key] !== false);
}
