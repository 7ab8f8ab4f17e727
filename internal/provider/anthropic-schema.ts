import { isObject } from './json.js';
import { describeDropped } from './schema-notes.js';
import type { JsonObject, JsonValue } from './types.js';

/**
 * Anthropic's structured output (`output_config.format`) takes a subset of JSON Schema and
 * refuses the rest with a 400: every object must say `additionalProperties: false`; numeric and
 * string bounds, `pattern`, `default`, … are not accepted; `format` only from a short list;
 * `minItems` only 0 or 1. The schema is rewritten to that subset and what is left out is written
 * into the descriptions (as the official SDK's `transformJSONSchema` does).
 */
const ANY_KEYS = new Set([
  'type',
  'enum',
  'const',
  'anyOf',
  'allOf',
  '$ref',
  '$defs',
  'description',
  'title',
]);
const STRING_FORMATS = new Set([
  'date-time',
  'time',
  'date',
  'duration',
  'email',
  'hostname',
  'uri',
  'ipv4',
  'ipv6',
  'uuid',
]);

export function structuredOutputSchema(schema: JsonValue): JsonValue {
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  const dropped: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === 'additionalProperties') continue;
    if (key === 'oneOf' || key === 'anyOf' || key === 'allOf') {
      out[key === 'oneOf' ? 'anyOf' : key] = Array.isArray(value) ? value.map(structuredOutputSchema) : value;
    } else if (key === '$defs' && isObject(value)) out.$defs = mapValues(value);
    else if (key === 'properties' && schema.type === 'object' && isObject(value))
      out.properties = mapValues(value);
    else if (key === 'required' && schema.type === 'object') out.required = value;
    else if (key === 'items' && schema.type === 'array') out.items = structuredOutputSchema(value);
    else if (key === 'minItems' && schema.type === 'array' && (value === 0 || value === 1))
      out.minItems = value;
    else if (
      key === 'format' &&
      schema.type === 'string' &&
      typeof value === 'string' &&
      STRING_FORMATS.has(value)
    )
      out.format = value;
    else if (ANY_KEYS.has(key)) out[key] = value;
    else dropped[key] = value;
  }
  if (schema.type === 'object') {
    out.properties ??= {};
    out.additionalProperties = false;
  }
  const description = describeDropped(
    typeof out.description === 'string' ? out.description : undefined,
    dropped,
  );
  if (description !== undefined) out.description = description;
  return out;
}

function mapValues(object: JsonObject): JsonObject {
  return Object.fromEntries(
    Object.entries(object).map(([key, value]) => [key, structuredOutputSchema(value)]),
  );
}
