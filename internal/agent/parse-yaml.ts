import { isNode, LineCounter, parseDocument, type YAMLError } from 'yaml';
import { FileProblem } from '../config/file-problem.js';
import { toJsonValue } from '../config/json-value.js';
import { errorMessage } from '../errors.js';
import type { ParsedAgentFile } from './parsed-file.js';

const TOO_DEEP = 'nested too deeply to parse';

/**
 * Parses YAML (an agent file, or front-matter starting `lineOffset` lines into its file) with the
 * `yaml` package's core schema: no custom tags, duplicate keys rejected, aliases capped.
 */
export function parseYamlAgent(text: string, file: string, lineOffset = 0): ParsedAgentFile {
  const lineCounter = new LineCounter();
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false, schema: 'core' });
  } catch (error) {
    if (error instanceof RangeError) throw new FileProblem(file, `invalid YAML: ${TOO_DEEP}`);
    throw error;
  }
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw yamlProblem(problem, file, lineCounter, lineOffset);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new FileProblem(file, `invalid YAML: ${errorMessage(error)}`);
  }
  const locate = (segments: (string | number)[]): { line: number; column: number } | undefined => {
    for (let length = segments.length; length > 0; length--) {
      const node = doc.getIn(segments.slice(0, length), true);
      if (isNode(node) && node.range) {
        const position = lineCounter.linePos(node.range[0]);
        return { line: position.line + lineOffset, column: position.col };
      }
    }
    return undefined;
  };
  return { data: toJsonValue(value, file), locate, warnings: [], writtenAs: {} };
}

function yamlProblem(
  error: YAMLError,
  file: string,
  lineCounter: LineCounter,
  lineOffset: number,
): FileProblem {
  const first = (error.message.split('\n')[0] ?? 'syntax error').replace(/ at line \d+, column \d+:?$/, '');
  const reason = `invalid YAML: ${/call stack/i.test(first) ? TOO_DEEP : first}`;
  const position = error.linePos?.[0] ?? lineCounter.linePos(error.pos[0]);
  return new FileProblem(file, reason, { line: position.line + lineOffset, column: position.col });
}
