import type { JsonValue } from '../provider/types.js';
import { FileProblem } from './file-problem.js';

/** No agent or config field nests this deep; a hostile file must not exhaust the stack. */
const MAX_NESTING = 64;

/**
 * Turns what a TOML or YAML parser returned into plain JSON values, so nothing parser-specific
 * (dates, big integers, Maps, binary) crosses into validation. Keys such as `__proto__` become own
 * properties (and then fail validation as unknown keys) instead of touching prototypes.
 */
export function toJsonValue(value: unknown, file: string, path = '', depth = 0): JsonValue {
  if (depth > MAX_NESTING) throw new FileProblem(file, `nested deeper than ${MAX_NESTING} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw fieldError(file, path, `must be a finite number (got ${value})`);
    return value;
  }
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value))
    return value.map((item, index) => toJsonValue(item, file, `${path}[${index}]`, depth + 1));
  if (value instanceof Date) {
    throw fieldError(file, path, `dates are not supported here (got ${describeDate(value)})`);
  }
  if (typeof value === 'object' && isPlainObject(value)) {
    const out: { [key: string]: JsonValue } = {};
    for (const [key, item] of Object.entries(value)) {
      const child = toJsonValue(item, file, path ? `${path}.${key}` : key, depth + 1);
      Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  if (value === undefined) throw fieldError(file, path, 'has no value');
  throw fieldError(file, path, `unsupported value (${Object.prototype.toString.call(value)})`);
}

function describeDate(date: Date): string {
  const text = String(date);
  return Number.isNaN(date.getTime()) ? 'an invalid date' : text.length > 40 ? date.toISOString() : text;
}

function fieldError(file: string, path: string, message: string): FileProblem {
  return new FileProblem(file, message, path ? { field: path } : {});
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
