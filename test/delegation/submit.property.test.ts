import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OutputSpec } from '../../internal/agent/spec.js';
import { SUBMIT_RESULT, submitHandlers } from '../../internal/delegation/submit.js';
import type { JsonObject, JsonValue } from '../../internal/provider/types.js';

/** Small JSON Schemas of the shapes agent files declare: scalars with constraints, arrays, objects. */
const scalarSchema: fc.Arbitrary<JsonObject> = fc.oneof(
  fc.record(
    { type: fc.constant('string'), maxLength: fc.integer({ min: 0, max: 4 }) },
    { requiredKeys: ['type'] },
  ),
  fc.record(
    { type: fc.constantFrom('number', 'integer'), minimum: fc.integer({ min: -3, max: 3 }) },
    { requiredKeys: ['type'] },
  ),
  fc.constant({ type: 'boolean' }),
  fc.constant({ type: 'null' }),
  fc.record({
    enum: fc.uniqueArray(fc.constantFrom('a', 'b', 1, true, null), { minLength: 1, maxLength: 3 }),
  }),
);

const schema: fc.Arbitrary<JsonObject> = fc.letrec<{ node: JsonObject }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalarSchema,
    fc.record(
      { type: fc.constant('array'), items: tie('node'), maxItems: fc.integer({ min: 0, max: 3 }) },
      { requiredKeys: ['type', 'items'] },
    ),
    fc.dictionary(fc.constantFrom('a', 'b', 'c'), tie('node'), { maxKeys: 3 }).chain((properties) =>
      fc.record(
        {
          type: fc.constant('object'),
          properties: fc.constant(properties),
          required: fc.subarray(Object.keys(properties)),
          additionalProperties: fc.boolean(),
        },
        { requiredKeys: ['type', 'properties'] },
      ),
    ),
  ),
})).node;

/** JSON values that often hit the schemas' shapes, and sometimes anything at all. */
const value: fc.Arbitrary<JsonValue> = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>,
  fc.constantFrom(
    'a',
    'b',
    '',
    'abcde',
    1,
    2.5,
    -4,
    true,
    null,
    [],
    ['a'],
    [1, 2],
    { a: 'a' },
    { a: 1, b: true },
    { c: [] },
  ),
);

describe('submit_result accepts exactly what ajv accepts', () => {
  it('for random small schemas and random values', async () => {
    const ajv = new Ajv({ strict: false });
    await fc.assert(
      fc.asyncProperty(schema, value, async (outputSchema, submitted) => {
        const output: OutputSpec = { name: 'result', description: '', schema: outputSchema };
        const handler = (await submitHandlers(output)).get(SUBMIT_RESULT)!;
        const executed = await handler(
          { id: 'c1', name: SUBMIT_RESULT, arguments: { result: submitted } },
          1,
          [],
        );
        const valid = ajv.validate(outputSchema, submitted);
        expect(executed.submission !== undefined).toBe(valid);
        expect(executed.output.isError).toBe(!valid);
        if (valid) expect(executed.submission).toEqual({ value: submitted });
        else expect(executed.output.content).toMatch(/\n- \/result\S*: expected .+, got .+/);
      }),
      { numRuns: 400, seed: 20261124 },
    );
  });
});
