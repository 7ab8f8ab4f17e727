import { FileProblem } from '../config/file-problem.js';
import { own } from '../config/own.js';
import { CODEX_FIELD_NAMES, isCodexDefinition, mapCodexDefinition } from './codex-fields.js';
import { quoteColonValues, splitFrontMatter } from './front-matter.js';
import { FOREIGN_FIELD_NAMES, type MappedFrontMatter, mapFrontMatter } from './markdown-fields.js';
import { parseYamlAgent } from './parse-yaml.js';
import type { ParsedAgentFile } from './parsed-file.js';

/**
 * A Markdown agent: YAML front-matter (Claude Code / Gemini CLI / opencode / Codex / axe fields) +
 * prompt body.
 */
export function parseMarkdownAgent(text: string, file: string, name: string): ParsedAgentFile {
  const { yaml, body, lineOffset } = splitFrontMatter(text, file);
  const frontMatter = parseFrontMatterYaml(yaml, file, lineOffset);
  return (
    codexFile(frontMatter, body, name, file) ??
    mappedFile(mapFrontMatter(frontMatter.data, body, name), frontMatter, file, FOREIGN_FIELD_NAMES)
  );
}

/** A YAML file or front-matter in Codex's shape, mapped onto axe's fields; undefined for any other. */
export function codexFile(
  parsed: ParsedAgentFile,
  body: string,
  name: string,
  file: string,
): ParsedAgentFile | undefined {
  if (!isCodexDefinition(parsed.data)) return undefined;
  const mapped = mapCodexDefinition(parsed.data, body, name);
  return { ...mappedFile(mapped, parsed, file, CODEX_FIELD_NAMES), dialect: 'codex' };
}

/** Mapped fields as a parsed file: the first mapping error thrown, positions found under the written names. */
function mappedFile(
  mapped: MappedFrontMatter,
  parsed: ParsedAgentFile,
  file: string,
  knownFields: readonly string[],
): ParsedAgentFile {
  const firstError = mapped.errors[0];
  if (firstError) {
    const position = parsed.locate?.(firstError.field.split('.'));
    throw new FileProblem(file, firstError.message, {
      field: firstError.field,
      ...(position ? { line: position.line, column: position.column } : {}),
    });
  }
  const { locate } = parsed;
  return {
    data: mapped.data,
    warnings: mapped.warnings,
    notes: mapped.notes,
    knownFields,
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
