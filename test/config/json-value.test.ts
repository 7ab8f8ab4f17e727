import { describe, expect, it } from 'vitest';
import { FileProblem } from '../../internal/config/file-problem.js';
import { toJsonValue } from '../../internal/config/json-value.js';

function problemOf(value: unknown): FileProblem {
  try {
    toJsonValue(value, 'a.toml');
  } catch (error) {
    if (error instanceof FileProblem) return error;
    throw error;
  }
  throw new Error('no problem found');
}

describe('toJsonValue', () => {
  it('copies plain data, big integers as numbers, `__proto__` as an own key', () => {
    const parsed = JSON.parse('{"a":[1,{"b":null}],"__proto__":{"c":true}}');
    const value = toJsonValue(
      { ...parsed, n: 2n, o: Object.assign(Object.create(null), { x: 'y' }) },
      'a.toml',
    );
    expect(JSON.stringify(value)).toBe('{"a":[1,{"b":null}],"__proto__":{"c":true},"n":2,"o":{"x":"y"}}');
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(['a', '__proto__', 'n', 'o']);
    expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toEqual({ c: true });
  });

  it('names the field of a value it refuses, through tables and arrays', () => {
    expect(problemOf({ t: { list: [1, new Date(0)] } }).location.field).toBe('t.list[1]');
    expect(problemOf([{ x: Number.NaN }]).location.field).toBe('[0].x');
    expect(problemOf({ a: undefined }).reason).toBe('has no value');
    expect(problemOf(new Map()).location.field).toBeUndefined();
    let deep: unknown = 1;
    for (let i = 0; i < 70; i++) deep = [deep];
    expect(problemOf(deep).reason).toBe('nested deeper than 64 levels');
  });
});
