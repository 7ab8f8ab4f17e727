import type { JsonObject } from './types.js';

/**
 * A description that also states the JSON Schema keys a wire cannot send (`minimum`, a nested
 * object's `properties`, …), so the model still sees the constraint the schema had.
 */
export function describeDropped(description: string | undefined, dropped: JsonObject): string | undefined {
  if (Object.keys(dropped).length === 0) return description;
  const note = `JSON Schema: ${JSON.stringify(dropped)}`;
  return description ? `${description} (${note})` : note;
}
