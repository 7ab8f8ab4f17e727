import { constants } from 'node:fs';
import { join } from 'node:path';
import { compileGlob, GlobError } from '../fs/glob.js';
import { fsPromises } from '../fs/promises.js';
import { wholeCharsPrefix } from '../text.js';
import { optionalBoolean, optionalString, requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { openInSandbox } from './sandbox.js';
import { walkWorkdir } from './workdir-walk.js';

/** At most this many matching lines come back; the rest are counted. */
export const MAX_GREP_MATCHES = 200;
/** A matching line is cut to this many characters (UTF-16 units; one fewer not to split an emoji). */
export const MAX_LINE_CHARS = 500;
/** Larger files are skipped (named in the answer). */
const MAX_GREP_FILE_BYTES = 10 * 1024 * 1024;

export const grepFilesTool = defineTool(
  {
    name: 'grep_files',
    description:
      'Search file contents in the working directory with a regular expression. Returns "path:line: text" for each matching line. Skips binary files, .git and what .gitignore ignores.',
    parameters: objectSchema(
      {
        pattern: {
          type: 'string',
          description: 'Regular expression (JavaScript syntax) to search for, e.g. "function\\\\s+parse".',
        },
        glob: {
          type: 'string',
          description: 'Only search files whose path matches this glob, e.g. "**/*.ts".',
        },
        ignore_case: { type: 'boolean', description: 'Match case-insensitively. Defaults to false.' },
      },
      ['pattern'],
    ),
  },
  async (args, context) => {
    const source = requiredString(args, 'pattern');
    const filter = optionalString(args, 'glob', '');
    const test = linearMatcher(source, optionalBoolean(args, 'ignore_case', false));
    let keep: (path: string) => boolean = () => true;
    try {
      if (filter !== '') keep = compileGlob(filter);
    } catch (error) {
      if (error instanceof GlobError) throw new Error(error.message);
      throw error;
    }
    const root = await fsPromises().realpath(context.workdir);
    const { files, truncated } = await walkWorkdir(root, context.signal);
    const lines: string[] = [];
    let more = 0;
    const skipped: string[] = [];
    for (const file of files.filter((path) => keep(path))) {
      if (context.signal.aborted) throw new Error('cancelled');
      const text = await readText(root, file, skipped);
      if (text === undefined) continue;
      let number = 0;
      for (const line of text.split('\n')) {
        number++;
        if (!test(line)) continue;
        if (lines.length >= MAX_GREP_MATCHES) {
          more++;
          continue;
        }
        const shown = line.length > MAX_LINE_CHARS ? `${wholeCharsPrefix(line, MAX_LINE_CHARS)}…` : line;
        lines.push(`${file}:${number}: ${shown.replace(/\r$/, '')}`);
      }
    }
    const notes = [
      ...(more > 0 ? [`(${more} more matching lines not shown: narrow the pattern or the glob)`] : []),
      ...(skipped.length > 0 ? [`(skipped, larger than 10 MiB: ${skipped.join(', ')})`] : []),
      ...(truncated ? ['(the search stopped early: the working directory has too many files)'] : []),
    ];
    if (lines.length === 0) return [`no matches for ${JSON.stringify(source)}`, ...notes].join('\n');
    return [...lines, ...notes].join('\n');
  },
);

/**
 * A model's pattern runs on every line of the workdir. A backtracking one (`(a+)+$`) would block
 * the event loop for minutes — Ctrl-C and the deadline included — so patterns run on V8's
 * linear-time engine (the `l` flag), which refuses what it cannot run in linear time. The engine
 * is switched on when grep first runs, not when the tool is defined: a V8 flag set makes Node
 * compile every built-in module loaded after it without its code cache (`node:http`: 4 → 10 ms).
 */
let linearEngine = false;
function enableLinearEngine(): void {
  if (linearEngine) return;
  process.getBuiltinModule('node:v8').setFlagsFromString('--enable-experimental-regexp-engine');
  linearEngine = true;
}

/**
 * A line test that finishes in time linear in the line. The engine has no `i` flag: with
 * `ignoreCase` the pattern's letters (not the character after a `\`) and the line are lowercased.
 */
function linearMatcher(source: string, ignoreCase: boolean): (line: string) => boolean {
  const pattern = ignoreCase
    ? source.replace(/\\.|[^\\]+/gs, (part) => (part.startsWith('\\') ? part : part.toLowerCase()))
    : source;
  let regex: RegExp;
  enableLinearEngine();
  try {
    regex = new RegExp(pattern, 'l');
  } catch (error) {
    const reason = (error as Error).message.includes('linear time')
      ? 'backreferences and lookaround are not supported (patterns must run in linear time)'
      : (error as Error).message.replace(/^Invalid regular expression: \/.*\/\w*: /, '');
    throw new Error(`invalid regular expression ${JSON.stringify(source)}: ${reason}`);
  }
  return ignoreCase ? (line) => regex.test(line.toLowerCase()) : (line) => regex.test(line);
}

/** The file's text, or undefined for a binary, too large or vanished file. Never follows a symlink. */
async function readText(root: string, file: string, skipped: string[]): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof openInSandbox>>;
  try {
    handle = await openInSandbox(root, join(root, file), constants.O_RDONLY, file);
  } catch {
    return undefined; // replaced or removed since the walk
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return undefined;
    if (info.size > MAX_GREP_FILE_BYTES) {
      skipped.push(file);
      return undefined;
    }
    const bytes = await handle.readFile();
    return bytes.subarray(0, 8000).includes(0) ? undefined : bytes.toString('utf8');
  } finally {
    await handle.close();
  }
}
