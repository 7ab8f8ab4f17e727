import { FileProblem } from '../config/file-problem.js';
import { own } from '../config/own.js';
import { quoteColonValues, splitFrontMatter } from './front-matter.js';
import { FOREIGN_FIELD_NAMES, mapFrontMatter } from './markdown-fields.js';
import { parseYamlAgent } from './parse-yaml.js';
import type { ParsedAgentFile } from './parsed-file.js';

/** A Markdown agent: YAML front-matter (Claude Code / Gemini CLI / opencode / axe fields) + prompt body. */
export function parseMarkdownAgent(text: string, file: string, name: string): ParsedAgentFile {
  const { yaml, body, lineOffset } = splitFrontMatter(text, file);
  const frontMatter = parseFrontMatterYaml(yaml, file, lineOffset);
  const mapped = mapFrontMatter(frontMatter.data, body, name);
  const firstError = mapped.errors[0];
  if (firstError) {
    const position = frontMatter.locate?.([firstError.field]);
    throw new FileProblem(file, firstError.message, {
      field: firstError.field,
      ...(position ? { line: position.line, column: position.column } : {}),
    });
  }
  const locate = frontMatter.locate;
  return {
    data: mapped.data,
    warnings: mapped.warnings,
    notes: mapped.notes,
    knownFields: FOREIGN_FIELD_NAMES,
    writtenAs: mapped.writtenAs,
    ...(locate
      ? {
          locate: (segments: (string | number)[]) => {
            const top = segments[0];
            const written = typeof top === 'string' ? own(mapped.writtenAs, top) : undefined;
            return locate(written ? [written, ...segments.slice(1)] : segments);
          },
        }
      : {}),
  };
}

function parseFrontMatterYaml(yaml: string, file: string, lineOffset: number): ParsedAgentFile {
  try {
    return parseYamlAgent(yaml, file, lineOffset);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    const quoted = quoteColonValues(yaml);
    if (!quoted) throw error;
    try {
      return parseYamlAgent(quoted, file, lineOffset);
    } catch {
      throw new FileProblem(
        file,
        `${error.reason}; if a value contains ": ", put it in quotes (description: "…")`,
        error.location,
      );
    }
  }
}
