import { lstatSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { UnreadableFileError } from '../fs/read-bounded.js';

/** Where in a file a problem is: the field path and, when the parser knows it, line and column. */
export interface ProblemLocation {
  field?: string;
  line?: number;
  column?: number;
}

/** `axe/agents/reviewer.toml:3:7: sub_agents_config.max_depth: must be <= 5 (got 6)` */
export function formatProblem(file: string, message: string, location: ProblemLocation = {}): string {
  const position = location.line ? `:${location.line}${location.column ? `:${location.column}` : ''}` : '';
  const field = location.field ? `${location.field}: ` : '';
  return `${displayPath(file)}${position}: ${field}${message}`;
}

/** A path relative to the current directory when it is inside it, else as given. */
function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : file;
}

/** A ConfigError about one place in one file, keeping the parts apart for `axe validate --json`. */
export class FileProblem extends ConfigError {
  readonly file: string;
  readonly reason: string;
  readonly location: ProblemLocation;
  constructor(file: string, reason: string, location: ProblemLocation = {}) {
    super(formatProblem(file, reason, location));
    this.file = file;
    this.reason = reason;
    this.location = location;
  }
}

/** A file that cannot be read: missing, a dangling link, permissions, not a regular file, too large. */
export function unreadableFile(file: string, error: unknown): FileProblem {
  if (error instanceof UnreadableFileError) return new FileProblem(file, error.message);
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') {
    return new FileProblem(file, isSymlink(file) ? 'is a symbolic link to a missing file' : 'does not exist');
  }
  return new FileProblem(file, `cannot read: ${fsErrorReason(error)}`);
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}
