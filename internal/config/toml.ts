import { parse, TomlError } from 'smol-toml';
import type { JsonValue } from '../provider/types.js';
import { FileProblem } from './file-problem.js';
import { toJsonValue } from './json-value.js';
import { locateInToml, type TomlPositions, tomlPositions } from './toml-locate.js';

export interface ParsedToml {
  data: JsonValue;
  /** Line and column of a field path (or of its nearest parent found in the text). */
  locate: (segments: (string | number)[]) => { line: number; column: number } | undefined;
}

/** Parses a TOML file's text (agent or config.toml); a syntax error is a FileProblem with its position. */
export function parseTomlFile(text: string, file: string): ParsedToml {
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    if (error instanceof RangeError) throw new FileProblem(file, 'invalid TOML: nested too deeply to parse');
    if (!(error instanceof TomlError)) throw error;
    const reason = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') || 'syntax error';
    throw new FileProblem(file, `invalid TOML: ${reason}`, { line: error.line, column: error.column });
  }
  const data = toJsonValue(parsed, file);
  let positions: TomlPositions | undefined;
  // The text is scanned only when a finding needs a position.
  const locate = (segments: (string | number)[]) => {
    positions ??= tomlPositions(text);
    return locateInToml(positions, segments);
  };
  return { data, locate };
}
