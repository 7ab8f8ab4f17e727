/**
 * The common forms of `.gitignore` (what `glob_files` and `grep_files` skip): `name` at any depth,
 * `/anchored` and `dir/sub` paths relative to the file's directory, a trailing `/` for directories
 * only, `*`, `?`, `[...]`, `**`, and `!` to take a path back. The last matching rule wins.
 */
export interface IgnoreRule {
  /** The directory of the `.gitignore`, relative to the root ('' = the root). */
  base: string;
  regex: RegExp;
  /** No `/` in the pattern: matched against the name alone, at any depth below `base`. */
  nameOnly: boolean;
  directoryOnly: boolean;
  negated: boolean;
}

export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    if (negated) line = line.slice(1);
    const directoryOnly = line.endsWith('/');
    if (directoryOnly) line = line.slice(0, -1);
    const nameOnly = !line.includes('/');
    if (line.startsWith('/')) line = line.slice(1);
    if (line === '') continue;
    rules.push({ base, regex: new RegExp(`^${toRegex(line)}$`, 'u'), nameOnly, directoryOnly, negated });
  }
  return rules;
}

/** Whether `rel` (posix, relative to the root) is ignored by `rules`, in order. */
export function isIgnored(rel: string, isDirectory: boolean, rules: readonly IgnoreRule[]): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.directoryOnly && !isDirectory) continue;
    if (rule.base !== '' && !rel.startsWith(`${rule.base}/`)) continue;
    const inside = rule.base === '' ? rel : rel.slice(rule.base.length + 1);
    const subject = rule.nameOnly ? inside.slice(inside.lastIndexOf('/') + 1) : inside;
    if (rule.regex.test(subject)) ignored = !rule.negated;
  }
  return ignored;
}

function toRegex(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i] as string;
    if (pattern.startsWith('**/', i)) {
      out += '(?:.*/)?';
      i += 2;
    } else if (pattern.startsWith('/**', i) && i + 3 === pattern.length) {
      out += '/.*';
      i += 2;
    } else if (pattern.startsWith('**', i)) {
      out += '.*';
      i += 1;
    } else if (char === '*') out += '[^/]*';
    else if (char === '?') out += '[^/]';
    else if (char === '\\' && i + 1 < pattern.length) out += escapeChar(pattern[++i] as string);
    else if (char === '[' && pattern.indexOf(']', i + 2) !== -1) {
      const close = pattern.indexOf(']', i + 2);
      let body = pattern.slice(i + 1, close);
      const negated = body.startsWith('!') || body.startsWith('^');
      if (negated) body = body.slice(1);
      out += `[${negated ? '^' : ''}${body.replace(/[\]\\^]/g, '\\$&')}]`;
      i = close;
    } else out += escapeChar(char);
  }
  return out;
}

function escapeChar(char: string): string {
  return char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
