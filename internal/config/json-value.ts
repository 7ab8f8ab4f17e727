import type { JsonValue } from '../provider/types.js';
import { isoTime } from '../time.js';
import { FileProblem } from './file-problem.js';

/** No agent or config field nests this deep; a hostile file must not exhaust the stack. */
const MAX_NESTING = 64;

/**
 * Turns what a TOML or YAML parser returned into plain JSON values, so nothing parser-specific
 * (dates, big integers, Maps, binary) crosses into validation. Keys such as `__proto__` become own
 * properties (and then fail validation as unknown keys) instead of touching prototypes.
 */
export function toJsonValue(value: unknown, file: string): JsonValue {
  return converted(value, file, []);
}

/**
 * `at` is the way down to `value` (keys and indexes), pushed and popped in place: its dotted form
 * is only made for an error (agents list converts dozens of files before it prints a line).
 */
function converted(value: unknown, file: string, at: (string | number)[]): JsonValue {
  if (at.length > MAX_NESTING) throw new FileProblem(file, `nested deeper than ${MAX_NESTING} levels`);
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw fieldError(file, at, `must be a finite number (got ${value})`);
    return value;
  }
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array(value.length);
    for (let index = 0; index < value.length; index++) {
      at.push(index);
      out[index] = converted(value[index], file, at);
      at.pop();
    }
    return out;
  }
  if (value instanceof Date) {
    throw fieldError(file, at, `dates are not supported here (got ${describeDate(value)})`);
  }
  if (typeof value === 'object' && isPlainObject(value)) {
    const source = value as Record<string, unknown>;
    const out: { [key: string]: JsonValue } = {};
    for (const key of Object.keys(source)) {
      at.push(key);
      const child = converted(source[key], file, at);
      at.pop();
      if (key === '__proto__') {
        Object.defineProperty(out, key, {
          value: child,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        out[key] = child;
      }
    }
    return out;
  }
  if (value === undefined) throw fieldError(file, at, 'has no value');
  throw fieldError(file, at, `unsupported value (${Object.prototype.toString.call(value)})`);
}

function describeDate(date: Date): string {
  const text = String(date);
  return Number.isNaN(date.getTime()) ? 'an invalid date' : text.length > 40 ? isoTime(date) : text;
}

function fieldError(file: string, at: (string | number)[], message: string): FileProblem {
  let field = '';
  for (const step of at) field += typeof step === 'number' ? `[${step}]` : field ? `.${step}` : step;
  return new FileProblem(file, message, field ? { field } : {});
}

function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
