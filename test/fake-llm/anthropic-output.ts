import { isRecord } from './json.js';
import type { Refusal } from './wire.js';

/**
 * `output_config` (structured output): `format` is `{type: "json_schema", schema}` and the schema
 * must stay inside the subset the API compiles: objects closed with `additionalProperties:
 * false`, no numeric or length bounds, `minItems` 0 or 1, `format` from a fixed list.
 */
const UNSUPPORTED = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
];
const FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'];

function invalid(message: string): Refusal {
  return { status: 400, message };
}

export function validateOutputConfig(config: unknown): Refusal | undefined {
  if (config === undefined) return undefined;
  if (!isRecord(config)) return invalid('output_config: Input should be a valid dictionary');
  for (const key of Object.keys(config)) {
    if (key !== 'format' && key !== 'effort')
      return invalid(`output_config.${key}: Extra inputs are not permitted`);
  }
  const format = config.format;
  if (format === undefined || format === null) return undefined;
  if (!isRecord(format) || format.type !== 'json_schema' || !isRecord(format.schema)) {
    return invalid(
      "output_config.format: Input should be a valid dictionary with type 'json_schema' and a schema",
    );
  }
  return schemaProblem(format.schema, 'output_config.format.schema');
}

function schemaProblem(schema: unknown, at: string): Refusal | undefined {
  if (!isRecord(schema)) return undefined;
  const bad = UNSUPPORTED.find((key) => key in schema);
  if (bad !== undefined) return invalid(`${at}: '${bad}' is not supported in structured outputs`);
  if (schema.type === 'object' && schema.additionalProperties !== false) {
    return invalid(`${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
  }
  if (typeof schema.minItems === 'number' && schema.minItems > 1) {
    return invalid(`${at}: 'minItems' values other than 0 or 1 are not supported`);
  }
  if (schema.format !== undefined && !FORMATS.includes(String(schema.format))) {
    return invalid(`${at}: string format ${JSON.stringify(schema.format)} is not supported`);
  }
  const children: [string, unknown][] = [
    ...Object.entries(isRecord(schema.properties) ? schema.properties : {}).map(
      ([k, v]): [string, unknown] => [`${at}.properties.${k}`, v],
    ),
    ...Object.entries(isRecord(schema.$defs) ? schema.$defs : {}).map(([k, v]): [string, unknown] => [
      `${at}.$defs.${k}`,
      v,
    ]),
    [`${at}.items`, schema.items],
    ...['anyOf', 'allOf'].flatMap((key) =>
      Array.isArray(schema[key])
        ? (schema[key] as unknown[]).map((v, i): [string, unknown] => [`${at}.${key}[${i}]`, v])
        : [],
    ),
  ];
  for (const [where, child] of children) {
    const problem = schemaProblem(child, where);
    if (problem) return problem;
  }
  return undefined;
}
