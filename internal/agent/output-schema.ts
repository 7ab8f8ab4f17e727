import type { Ajv as AjvInstance, ErrorObject, ValidateFunction } from 'ajv';
import type { JsonObject, JsonValue } from '../provider/types.js';
import { maskSecrets } from '../secrets.js';

/**
 * Checking values against an agent's `[output] schema`, with ajv imported only when an agent
 * declares one (most runs never load it). Draft-07 by default; a `$schema` of 2019-09 or 2020-12
 * selects that draft. `format` is not checked (ajv's formats are a separate package).
 */

/** One way a value fails the schema: where, what the schema wanted, what it got. */
export interface Violation {
  /** JSON Pointer into the value; `` is the value itself. */
  path: string;
  expected: string;
  got: string;
}

export type OutputCheck = (value: JsonValue) => Violation[];

/** A schema ajv cannot use: `path` points into the schema (`/properties/verdict/type`). */
export class OutputSchemaError extends Error {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

const instances = new Map<string, Promise<AjvInstance>>();

async function ajvFor(schema: JsonObject): Promise<AjvInstance> {
  const declared = typeof schema.$schema === 'string' ? schema.$schema : '';
  const draft = declared.includes('2020-12') ? '2020' : declared.includes('2019-09') ? '2019' : '07';
  let instance = instances.get(draft);
  if (!instance) {
    instance = (async () => {
      const options = { allErrors: true, strict: false, logger: false, validateFormats: false } as const;
      if (draft === '2020') return new (await import('ajv/dist/2020.js')).Ajv2020(options);
      if (draft === '2019') return new (await import('ajv/dist/2019.js')).Ajv2019(options);
      return new (await import('ajv')).Ajv(options);
    })();
    instances.set(draft, instance);
  }
  return instance;
}

const compiled = new WeakMap<JsonObject, Promise<ValidateFunction>>();

/** Compiles `schema` once; a schema that is not valid JSON Schema throws OutputSchemaError. */
export function compileOutputSchema(schema: JsonObject): Promise<ValidateFunction> {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = (async () => {
      const ajv = await ajvFor(schema);
      if (!(await ajv.validateSchema(schema))) {
        const first = ajv.errors?.[0];
        throw new OutputSchemaError(
          `is not valid JSON Schema: ${first?.message ?? 'rejected'}`,
          first?.instancePath ?? '',
        );
      }
      try {
        return ajv.compile(schema);
      } catch (error) {
        throw new OutputSchemaError(`cannot be used: ${(error as Error).message}`, '');
      }
    })();
    compiled.set(schema, validate);
  }
  return validate;
}

/** The check of values against `schema`: every violation, empty when the value is valid. */
export async function outputCheck(schema: JsonObject): Promise<OutputCheck> {
  const validate = await compileOutputSchema(schema);
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map((error) => violation(error, value)));
}

function violation(error: ErrorObject, value: JsonValue): Violation {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const path = `${error.instancePath}/${String(params.missingProperty)}`;
    return { path, expected: 'a value (required)', got: 'nothing' };
  }
  if (error.keyword === 'additionalProperties') {
    const path = `${error.instancePath}/${String(params.additionalProperty)}`;
    return { path, expected: 'no such property', got: shown(valueAt(value, path)) };
  }
  const allowed = Array.isArray(params.allowedValues)
    ? `one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`
    : (error.message ?? error.keyword).replace(/^must (be )?/, '');
  return { path: error.instancePath, expected: allowed, got: shown(valueAt(value, error.instancePath)) };
}

function valueAt(value: JsonValue, pointer: string): JsonValue | undefined {
  let here: JsonValue | undefined = value;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(here)) here = here[Number(key)];
    else if (here !== null && typeof here === 'object') here = here[key];
    else return undefined;
  }
  return here;
}

const SHOWN_CHARS = 80;

function shown(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  // Masked before it is cut: no part of a key is left.
  const text = maskSecrets(JSON.stringify(value));
  return text.length > SHOWN_CHARS ? `${text.slice(0, SHOWN_CHARS)}…` : text;
}

/** The violations as the model reads them: one line each, `(root)` for the value itself. */
export function describeViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) => `- ${v.path === '' ? '(root)' : v.path}: expected ${v.expected}, got ${v.got}`)
    .join('\n');
}
