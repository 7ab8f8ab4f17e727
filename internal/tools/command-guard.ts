import { posix } from 'node:path';
import { isWithin } from './sandbox.js';

/**
 * Heuristic checks of a `run_command` command line (after Go axe's, a bit stricter). This is a
 * guard against accidents and naive prompt injection, NOT a sandbox: the shell can build any path
 * at run time (variables, command substitution, eval, encodings). Real isolation needs a container.
 */

const DEVICE_PATHS = new Set([
  '/dev/null',
  '/dev/zero',
  '/dev/stdin',
  '/dev/stdout',
  '/dev/stderr',
  '/dev/urandom',
  '/dev/random',
  '/dev/tty',
]);

/** Characters that end a word for the shell (and for these checks). */
const SEPARATORS = /[\s;|&()<>`'"={},:]+/;
const URL_PATTERN = /\bhttps?:\/\/[^\s'"`]+/g;
/** `~` where the shell expands it: at the start of a word or after `=` / `:`. */
const TILDE_PATTERN = /(^|[\s=:;|&(<>'"`])~[\w.-]*(?:\/[^\s;|&()<>'"`]*)?(?=$|[\s;|&)<>'"`])/;
/** `/` that starts an absolute path: at the start of a word, after a separator, or glued to `-x`. */
const ABSOLUTE_PATTERN = /(?:^|[\s;|&()<>`'"={},:]|(?<=(?:^|\s)-[A-Za-z]))(\/[^\s;|&()<>`'"={},:]*)/g;
const PARENT_PATTERN = /(?:^|\/)\.\.(?:\/|$)/;

/** Undefined when the command passes; otherwise the reason, naming the offending text. */
export function checkCommand(workdir: string, command: string): string | undefined {
  const root = posix.normalize(workdir);
  if (root === '/') return undefined;
  const tilde = TILDE_PATTERN.exec(command);
  if (tilde) {
    const token = tilde[0].slice(tilde[1]!.length);
    return `command rejected: home directory expansion "${token}" is not allowed; use relative paths from the working directory instead`;
  }
  const masked = command.replace(URL_PATTERN, (url) => '_'.repeat(url.length));
  for (const token of masked.split(SEPARATORS)) {
    if (!PARENT_PATTERN.test(token)) continue;
    const bare = token.replace(/^-[A-Za-z]+(?=[./])/, '');
    if (!isWithin(posix.resolve(root, bare), root)) {
      return `command rejected: parent traversal in "${token}" escapes the working directory "${workdir}"; use relative paths that stay within the workdir`;
    }
  }
  for (const match of masked.matchAll(ABSOLUTE_PATTERN)) {
    const path = match[1]!;
    if (DEVICE_PATHS.has(path) || path.startsWith('/dev/fd/')) continue;
    if (!isWithin(posix.resolve(path), root)) {
      return `command rejected: absolute path "${path}" is outside the working directory "${workdir}"; use relative paths instead`;
    }
  }
  return undefined;
}
