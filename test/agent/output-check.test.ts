import { expect, it } from 'vitest';
import { outputCheck } from '../../internal/agent/output-schema.js';
import { addSecret } from '../../internal/secrets.js';

it('a value shown in a violation is cut to 80 characters, masked first: no part of a key is left', async () => {
  const key = 'sk-output-0123456789abcdefghijklmnop';
  addSecret(key);
  const check = await outputCheck({ type: 'object', properties: { n: { type: 'number' } } });
  const [violation] = check({ n: `${'x'.repeat(60)} ${key} tail` });
  expect(violation).toEqual({ path: '/n', expected: 'number', got: `"${'x'.repeat(60)} *** tail"` });
  const [long] = check({ n: 'y'.repeat(100) });
  expect(long?.got).toBe(`"${'y'.repeat(79)}…`);
});
