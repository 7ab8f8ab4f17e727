import type { JsonObject, JsonValue } from './types.js';

/**
 * Reading untyped wire JSON. Every provider module goes through these helpers, so a response
 * of an unexpected shape becomes one `WireError` (classified as a server error by the sender)
 * instead of a TypeError deep inside a translation function.
 */

/** A response or stream event that does not have the shape its wire format promises. */
export class WireError extends Error {
  /** The provider's own error, when the body was an error object (type, message, HTTP-like code). */
  readonly providerType: string | undefined;
  readonly providerStatus: number | undefined;
  constructor(message: string, options?: { providerType?: string; providerStatus?: number }) {
    super(message);
    this.name = 'WireError';
    this.providerType = options?.providerType;
    this.providerStatus = options?.providerStatus;
  }
}

export function parseJson(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    const preview = text.length > 80 ? `${text.slice(0, 80)}…` : text;
    throw new WireError(`${what} is not valid JSON: ${JSON.stringify(preview)}`);
  }
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function objectAt(value: JsonValue | undefined, what: string): JsonObject {
  if (!isObject(value)) throw new WireError(`unexpected response: ${what} is not an object`);
  return value;
}

/** An optional object field: undefined when absent or null. */
export function optObject(value: JsonValue | undefined): JsonObject | undefined {
  return isObject(value) ? value : undefined;
}

export function optArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

export function optString(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function optNumber(value: JsonValue | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Tool arguments sent as a JSON string (OpenAI, and every stream): parsed, or an error to report. */
export function parseToolArguments(raw: string): { arguments: JsonObject; argumentsError?: string } {
  if (raw.trim() === '') return { arguments: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { arguments: {}, argumentsError: `tool arguments are not valid JSON (${reason}): ${raw}` };
  }
  if (isObject(parsed as JsonValue)) return { arguments: parsed as JsonObject };
  return { arguments: {}, argumentsError: `tool arguments must be a JSON object, got: ${raw}` };
}
