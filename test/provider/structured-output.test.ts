import { describe, expect, it } from 'vitest';
import { structuredOutputSchema } from '../../internal/provider/anthropic-schema.js';
import type { JsonObject } from '../../internal/provider/types.js';
import { validateOutputConfig } from '../fake-llm/anthropic-output.js';

const accepted = (schema: JsonObject) =>
  validateOutputConfig({ format: { type: 'json_schema', schema: structuredOutputSchema(schema) } });

describe('Anthropic structured-output schemas', () => {
  it('closes every object, turns oneOf into anyOf and keeps $defs / $ref', () => {
    const schema: JsonObject = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        kind: { oneOf: [{ type: 'string', const: 'a' }, { $ref: '#/$defs/b' }] },
        at: { type: 'string', format: 'date-time' },
        tag: { type: 'string', format: 'hex-color', pattern: '^#' },
        list: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', properties: { x: { type: 'number' } } },
        },
      },
      $defs: { b: { type: 'object', additionalProperties: true, properties: {} } },
    };
    expect(structuredOutputSchema(schema)).toEqual({
      type: 'object',
      properties: {
        kind: { anyOf: [{ type: 'string', const: 'a' }, { $ref: '#/$defs/b' }] },
        at: { type: 'string', format: 'date-time' },
        tag: { type: 'string', description: 'JSON Schema: {"format":"hex-color","pattern":"^#"}' },
        list: {
          type: 'array',
          minItems: 1,
          items: { type: 'object', properties: { x: { type: 'number' } }, additionalProperties: false },
        },
      },
      $defs: { b: { type: 'object', properties: {}, additionalProperties: false } },
      additionalProperties: false,
    });
    expect(accepted(schema)).toBeUndefined();
  });

  it('what the fake refuses as written, it accepts rewritten', () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer', minimum: 0, maximum: 9, description: 'A digit.' } },
    };
    expect(validateOutputConfig({ format: { type: 'json_schema', schema } })).toBeDefined();
    expect(accepted(schema)).toBeUndefined();
    expect(structuredOutputSchema(schema)).toMatchObject({
      properties: { n: { description: 'A digit. (JSON Schema: {"minimum":0,"maximum":9})' } },
    });
  });
});
