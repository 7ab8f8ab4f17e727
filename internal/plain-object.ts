/** Parsed JSON (or anything) that is an object, not null or an array: its fields can be read. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
