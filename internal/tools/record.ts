import { isPlainObject } from '../plain-object.js';
/** Parsed JSON read field by field: the object itself, or `{}` for anything that is not one. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}
