import type { JsonRecord } from './json.js';
import type { Refusal } from './wire.js';

/** Gemini's proto-JSON field handling: camelCase and snake_case spellings, unknown-field refusals. */

export function invalid(message: string): Refusal {
  return { status: 400, message };
}

export function camel(key: string): string {
  return key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** The value of a field under either spelling. */
export function field(record: JsonRecord, name: string): unknown {
  return record[name] ?? record[snake(name)];
}

export function unknownKey(record: JsonRecord, allowed: string[], at: string): Refusal | undefined {
  const key = Object.keys(record).find((k) => !allowed.includes(camel(k)));
  if (key === undefined) return undefined;
  const where = at === '' ? '' : ` at '${at}'`;
  return invalid(`Invalid JSON payload received. Unknown name "${key}"${where}: Cannot find field.`);
}
