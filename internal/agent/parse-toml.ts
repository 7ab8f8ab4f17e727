import { parse, TomlError } from 'smol-toml';
import { FileProblem } from '../config/file-problem.js';
import { toJsonValue } from '../config/json-value.js';
import type { ParsedAgentFile } from './parsed-file.js';

export function parseTomlAgent(text: string, file: string): ParsedAgentFile {
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    if (error instanceof TomlError) {
      const reason = error.message.split('\n')[0]?.replace(/^Invalid TOML document: /, '') || 'invalid TOML';
      throw new FileProblem(file, reason, { line: error.line, column: error.column });
    }
    throw new FileProblem(file, `invalid TOML: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { data: toJsonValue(parsed, file), warnings: [], writtenAs: {} };
}
