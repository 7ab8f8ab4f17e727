import type { JsonValue } from '../provider/types.js';

/** Something said about one field of an agent file (`field` as written, dotted for nested ones). */
export interface FieldNote {
  field: string;
  message: string;
}

/** An agent file after parsing, before schema validation. */
export interface ParsedAgentFile {
  data: JsonValue;
  /** Line and column of a field, when the parser keeps positions (YAML, front-matter) or the
   * source text shows it (TOML). */
  locate?: (segments: (string | number)[]) => { line: number; column: number } | undefined;
  /** Findings of the format mapping (unsupported Claude / Gemini / opencode fields, …). */
  warnings: FieldNote[];
  /** Decisions worth saying, not warnings (the default tools of a Markdown agent without `tools`). */
  notes?: FieldNote[];
  /** Other programs' field names this format knows, for the did-you-mean of an unknown key. */
  knownFields?: readonly string[];
  /**
   * Canonical top-level key → the key as written in the file, when they differ (`max_turns` ←
   * `maxTurns`); a nested field mapped on its own is there too (`budget.max_turns` ← `runConfig.maxTurns`).
   */
  writtenAs: Record<string, string>;
  /** A Codex definition (`agentType`), mapped onto axe's fields. */
  dialect?: 'codex';
}
