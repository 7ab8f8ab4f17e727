import { FileProblem } from '../config/file-problem.js';

export interface FrontMatter {
  yaml: string;
  body: string;
  /** Lines before the YAML text (the opening `---`), to report positions in the whole file. */
  lineOffset: number;
}

/**
 * Splits `---` YAML front-matter from a Markdown body. Any other front-matter language (`---js`,
 * `---toml`, …) is refused: it is never evaluated, whatever it says.
 */
export function splitFrontMatter(text: string, file: string): FrontMatter {
  const opening = /^---([^\r\n]*)\r?\n/.exec(text);
  const misplaced = opening ? undefined : misplacedOpening(text);
  if (misplaced) throw new FileProblem(file, misplaced.message, { line: misplaced.line });
  if (opening && /^-+[ \t]*$/.test(opening[1] ?? '')) {
    throw new FileProblem(
      file,
      `front-matter opens with "${opening[0].trim()}": write exactly "---" (three dashes) on the first line`,
      { line: 1 },
    );
  }
  if (!opening) {
    throw new FileProblem(
      file,
      'no front-matter: start the file with a line "---", the YAML fields, then "---"',
      {
        line: 1,
      },
    );
  }
  const language = (opening[1] ?? '').trim();
  if (language !== '' && !/^ya?ml$/i.test(language)) {
    throw new FileProblem(
      file,
      `front-matter language "${language}" is not supported: axe reads YAML front-matter only (and never runs code from it)`,
      { line: 1 },
    );
  }
  const rest = text.slice(opening[0].length);
  const closing = /^(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/m.exec(rest);
  if (!closing) {
    const near = /^([ \t]+---|-{4,})[ \t]*\r?$/m.exec(rest);
    if (near) {
      const line = 2 + rest.slice(0, near.index).split('\n').length - 1;
      const what = near[0].trim().startsWith('----') ? `"${near[0].trim()}"` : 'an indented "---"';
      throw new FileProblem(
        file,
        `front-matter closes with ${what}: write exactly "---" at the start of the line`,
        { line },
      );
    }
    throw new FileProblem(file, 'front-matter is not closed: add a line "---" after the fields', { line: 1 });
  }
  return {
    yaml: rest.slice(0, closing.index),
    body: rest.slice(closing.index + closing[0].length),
    lineOffset: 1,
  };
}

/** A front-matter that is there but not where it must be: indented, or after blank lines. */
function misplacedOpening(text: string): { message: string; line: number } | undefined {
  const found = /^(\s*?)([ \t]*)---[ \t]*\r?\n/.exec(text);
  if (!found) return undefined;
  const line = (found[1] ?? '').split('\n').length;
  if ((found[2] ?? '') !== '') {
    return {
      message:
        'the front-matter\'s "---" is indented: start it (and the closing "---") at the beginning of the line',
      line,
    };
  }
  return {
    message: 'the front-matter must start on the first line: remove what comes before its "---"',
    line,
  };
}

/**
 * Hand-written Claude Code files often have `description: Use this agent when: …` — an unquoted
 * `": "` that YAML reads as a nested mapping. Quotes such top-level plain values; returns undefined
 * when there is nothing to quote.
 */
export function quoteColonValues(yaml: string): string | undefined {
  let changed = false;
  const lines = yaml.split('\n').map((line) => {
    const match = /^([A-Za-z_][\w-]*):[ \t]+(.*?)\r?$/.exec(line);
    const value = match?.[2];
    if (!match || value === undefined || /^["'[{|>&*!#%@`]/.test(value) || !/:(\s|$)/.test(value))
      return line;
    changed = true;
    return `${match[1]}: ${JSON.stringify(value)}`;
  });
  return changed ? lines.join('\n') : undefined;
}
