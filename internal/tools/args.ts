import type { JsonObject } from '../provider/types.js';

/**
 * Typed reading of tool arguments. Models sometimes send integers and booleans as strings, so
 * `"12"` and `"true"` are accepted too. A bad argument throws an Error naming it, which
 * `defineTool` turns into an error result.
 */

export function requiredString(args: JsonObject, name: string): string {
  const value = args[name];
  if (typeof value !== 'string' || value === '') {
    throw new Error(`"${name}" is required and must be a non-empty string`);
  }
  return value;
}

export function optionalString(args: JsonObject, name: string, fallback: string): string {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw new Error(`"${name}" must be a string`);
  return value;
}

export function optionalInteger(args: JsonObject, name: string, fallback: number, min: number): number {
  const value = args[name];
  if (value === undefined || value === null || value === '') return fallback;
  const number = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) {
    throw new Error(`"${name}" must be an integer, got ${JSON.stringify(value)}`);
  }
  if (number < min) throw new Error(`"${name}" must be >= ${min}, got ${number}`);
  return number;
}

export function optionalBoolean(args: JsonObject, name: string, fallback: boolean): boolean {
  const value = args[name];
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new Error(`"${name}" must be a boolean, got ${JSON.stringify(value)}`);
}
