import type { JsonValue } from '../provider/types.js';

/** An agent file after parsing, before schema validation. */
export interface ParsedAgentFile {
  data: JsonValue;
  /** Line and column of a field, when the parser keeps positions (YAML, front-matter) or the
   * source text shows it (TOML). */
  locate?: (segments: (string | number)[]) => { line: number; column: number } | undefined;
  /** Findings of the format mapping (unsupported Claude / Gemini / opencode fields, …). */
  warnings: { field: string; message: string }[];
  /** Canonical top-level key → the key as written in the file, when they differ (`max_turns` ← `maxTurns`). */
  writtenAs: Record<string, string>;
}
