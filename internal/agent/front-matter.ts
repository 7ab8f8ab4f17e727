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
  if (!closing)
    throw new FileProblem(file, 'front-matter is not closed: add a line "---" after the fields', { line: 1 });
  return {
    yaml: rest.slice(0, closing.index),
    body: rest.slice(closing.index + closing[0].length),
    lineOffset: 1,
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
