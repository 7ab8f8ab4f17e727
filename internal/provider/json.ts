import { errorMessage } from '../errors.js';
import { maskSecrets } from '../secrets.js';
import { oneLine } from '../text.js';
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

/** What a provider's error body or error event says about the failure (any part may be absent). */
export interface ErrorInfo {
  message?: string;
  /** The provider's error type (`overloaded_error`, `rate_limit_exceeded`, `RESOURCE_EXHAUSTED`). */
  type?: string;
  /** An HTTP-like status carried in the body (`error.code` of OpenRouter and Gemini). */
  code?: number;
  /** A wait the body asks for before retrying (Gemini's `RetryInfo.retryDelay`). */
  retryAfterMs?: number;
}

/**
 * The `{"error": {"message", <type field>, "code"}}` object of Anthropic, OpenAI and Gemini;
 * undefined when `json` carries no error object. The first string among `typeFields` is the type.
 */
export function nestedErrorInfo(
  json: JsonValue | undefined,
  typeFields: readonly string[],
): ErrorInfo | undefined {
  const error = isObject(json) ? optObject(json.error) : undefined;
  if (error === undefined) return undefined;
  const info: ErrorInfo = {};
  const message = optString(error.message);
  const type = typeFields.map((field) => optString(error[field])).find((value) => value !== undefined);
  const code = optNumber(error.code);
  if (message !== undefined) info.message = message;
  if (type !== undefined) info.type = type;
  if (code !== undefined) info.code = code;
  return info;
}

/** A provider error met in a 200 body or in a stream. */
export function wireErrorFrom(info: ErrorInfo): WireError {
  return new WireError(info.message ?? 'unknown error', {
    providerType: info.type,
    providerStatus: info.code,
  });
}

export function parseJson(text: string, what: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    // Masked before it is cut: no part of a key the body echoed is left in the preview.
    const flat = oneLine(maskSecrets(text));
    if (flat === '') throw new WireError(`${what} is empty`);
    const preview = flat.length > 80 ? `${flat.slice(0, 80)}…` : flat;
    throw new WireError(`${what} is not valid JSON: ${preview}`);
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
  let parsed: JsonValue;
  try {
    parsed = JSON.parse(raw) as JsonValue;
  } catch (error) {
    const reason = errorMessage(error);
    return { arguments: {}, argumentsError: `tool arguments are not valid JSON (${reason}): ${raw}` };
  }
  if (isObject(parsed)) return { arguments: parsed };
  return { arguments: {}, argumentsError: `tool arguments must be a JSON object, got: ${raw}` };
}
