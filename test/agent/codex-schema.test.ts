import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CODEX_FIELD_NAMES, NESTED } from '../../internal/agent/codex-fields.js';

/** schemas/codex-agent.schema.json and the mapping of codex-fields.ts describe one shape. */
const schema = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'schemas', 'codex-agent.schema.json'), 'utf8'),
) as { properties: Record<string, { properties?: Record<string, unknown> }> };

describe('Codex definition schema', () => {
  it('names every field the mapping knows, and nothing it does not', () => {
    expect(Object.keys(schema.properties).sort()).toEqual([...CODEX_FIELD_NAMES].sort());
    for (const [table, fields] of Object.entries(NESTED)) {
      expect(Object.keys(schema.properties[table]?.properties ?? {}).sort(), table).toEqual(
        Object.keys(fields).sort(),
      );
    }
  });

  it('accepts a definition in Codex shape and refuses one without agentType', () => {
    const validate = new Ajv2020({ strict: false }).compile(schema);
    const definition = parse(`agentType: reviewer
whenToUse: Reviews one file
modelConfig: { model: inherit, topP: 0.9 }
runConfig: { maxTurns: 3, gracePeriodSeconds: 5 }
inputConfig:
  inputs:
    file_path: { type: string, required: true }
outputConfig: { outputName: review, schema: { type: object } }
promptConfig: { systemPrompt: "Review \${file_path}", query: Start }
`);
    expect(validate(definition), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ whenToUse: 'x' })).toBe(false);
  });
});
