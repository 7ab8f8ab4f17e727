/** Small type guards for walking request bodies of unknown shape. */
export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A message's text: a string, or the `{type: "text", text}` blocks of Anthropic and OpenAI joined. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  return asArray(content)
    .filter((block): block is JsonRecord => isRecord(block) && block.type === 'text')
    .map((block) => asString(block.text))
    .join('\n');
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Type name as Go / pydantic error messages spell it. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
