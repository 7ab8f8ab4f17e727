import { field, invalid, unknownKey } from './google-fields.js';
import { isRecord } from './json.js';
import type { Refusal } from './wire.js';

/** Gemini `tools`: function declarations and their (OpenAPI-subset) `parameters` schemas. */
const TOOL_KEYS = [
  'functionDeclarations',
  'googleSearch',
  'googleSearchRetrieval',
  'codeExecution',
  'urlContext',
];
const DECLARATION_KEYS = [
  'name',
  'description',
  'parameters',
  'parametersJsonSchema',
  'response',
  'responseJsonSchema',
  'behavior',
];
/** The OpenAPI subset Gemini's `Schema` accepts; anything else (additionalProperties, $schema, const …) is refused. */
const SCHEMA_KEYS = [
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
];
const SCHEMA_TYPES = ['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'];
const FUNCTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/;

export function validateTools(tools: unknown): Refusal | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools))
    return invalid(
      `Invalid value at 'tools' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool), ${JSON.stringify(tools)}`,
    );
  for (const [i, tool] of tools.entries()) {
    if (!isRecord(tool))
      return invalid(
        `Invalid value at 'tools[${i}]' (type.googleapis.com/google.ai.generativelanguage.v1beta.Tool)`,
      );
    const unknown = unknownKey(tool, TOOL_KEYS, `tools[${i}]`);
    if (unknown) return unknown;
    const declarations = field(tool, 'functionDeclarations');
    if (declarations === undefined) continue;
    if (!Array.isArray(declarations)) return invalid(`Invalid value at 'tools[${i}].function_declarations'`);
    for (const [j, declaration] of declarations.entries()) {
      const refusal = validateDeclaration(declaration, `tools[${i}].function_declarations[${j}]`);
      if (refusal) return refusal;
    }
  }
  return undefined;
}

function validateDeclaration(declaration: unknown, at: string): Refusal | undefined {
  if (!isRecord(declaration))
    return invalid(
      `Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionDeclaration)`,
    );
  const unknown = unknownKey(declaration, DECLARATION_KEYS, at);
  if (unknown) return unknown;
  if (typeof declaration.name !== 'string' || !FUNCTION_NAME.test(declaration.name)) {
    return invalid(
      `* GenerateContentRequest.${at}.name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.`,
    );
  }
  const parameters = field(declaration, 'parameters');
  if (parameters !== undefined && field(declaration, 'parametersJsonSchema') !== undefined) {
    return invalid(
      `* GenerateContentRequest.${at}: parameters and parameters_json_schema cannot both be set.`,
    );
  }
  return parameters === undefined ? undefined : validateSchema(parameters, `${at}.parameters`);
}

function validateSchema(schema: unknown, at: string): Refusal | undefined {
  if (!isRecord(schema))
    return invalid(
      `Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Schema)`,
    );
  const unknown = unknownKey(schema, SCHEMA_KEYS, at);
  if (unknown) return unknown;
  const type = schema.type;
  if (type !== undefined && (typeof type !== 'string' || !SCHEMA_TYPES.includes(type.toUpperCase()))) {
    return invalid(
      `Invalid value at '${at}.type' (type.googleapis.com/google.ai.generativelanguage.v1beta.Type), ${JSON.stringify(type)}`,
    );
  }
  const upper = typeof type === 'string' ? type.toUpperCase() : '';
  const properties = schema.properties;
  if (upper === 'OBJECT' && (!isRecord(properties) || Object.keys(properties).length === 0)) {
    return invalid(`* GenerateContentRequest.${at}.properties: should be non-empty for OBJECT type`);
  }
  if (upper === 'ARRAY' && schema.items === undefined)
    return invalid(`* GenerateContentRequest.${at}.items: missing field.`);
  if (isRecord(properties)) {
    for (const [i, value] of Object.values(properties).entries()) {
      const refusal = validateSchema(value, `${at}.properties[${i}].value`);
      if (refusal) return refusal;
    }
  }
  if (schema.items !== undefined) {
    const refusal = validateSchema(schema.items, `${at}.items`);
    if (refusal) return refusal;
  }
  const anyOf = field(schema, 'anyOf');
  for (const [i, option] of (Array.isArray(anyOf) ? anyOf : []).entries()) {
    const refusal = validateSchema(option, `${at}.any_of[${i}]`);
    if (refusal) return refusal;
  }
  return undefined;
}
