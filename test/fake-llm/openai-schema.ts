import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { jsonTypeName } from './json.js';
import type { Refusal } from './wire.js';

/**
 * Official OpenAI request schemas, vendored with their licence in `vendor/openai/`: Chat
 * Completions and the Responses API. Each is compiled once per process, on its first request.
 */
interface Compiled {
  validate: ValidateFunction;
  topLevelKeys: Set<string>;
}

type SchemaNode = { properties?: Record<string, unknown>; allOf?: SchemaNode[]; $ref?: string };

/** Top-level request keys the schema knows, so unknown ones can be refused like the real API does. */
function collectKeys(node: SchemaNode, schemas: Record<string, SchemaNode>, into: Set<string>): void {
  for (const key of Object.keys(node.properties ?? {})) into.add(key);
  for (const part of node.allOf ?? []) collectKeys(part, schemas, into);
  const ref = node.$ref?.replace('#/components/schemas/', '');
  if (ref && schemas[ref]) collectKeys(schemas[ref], schemas, into);
}

function compile(fileName: string, root: string, discriminator: boolean): Compiled {
  const file = fileURLToPath(new URL(`./vendor/openai/${fileName}`, import.meta.url));
  const schema = JSON.parse(readFileSync(file, 'utf8')) as {
    $id: string;
    components: { schemas: Record<string, SchemaNode> };
  };
  const ajv = new Ajv2020({ strict: false, discriminator, logger: false });
  ajv.addFormat('unixtime', true);
  ajv.addSchema(schema);
  const validate = ajv.getSchema(`${schema.$id}#/components/schemas/${root}`);
  if (!validate) throw new Error(`${root} not found in ${file}`);
  const topLevelKeys = new Set<string>();
  const node = schema.components.schemas[root];
  if (node) collectKeys(node, schema.components.schemas, topLevelKeys);
  return { validate, topLevelKeys };
}

/** A check of request bodies against one vendored schema's root, compiled on first use. */
function schemaCheck(fileName: string, root: string, discriminator: boolean) {
  let compiled: Compiled | undefined;
  return (body: Record<string, unknown>): Refusal | undefined => {
    compiled ??= compile(fileName, root, discriminator);
    const { validate, topLevelKeys } = compiled;
    for (const key of Object.keys(body)) {
      if (!topLevelKeys.has(key))
        return { status: 400, message: `Unrecognized request argument supplied: ${key}` };
    }
    if (validate(body)) return undefined;
    return toRefusal(validate.errors ?? [], body);
  };
}

/** `/messages/0/content` → `messages[0].content`, as OpenAI names params. */
function paramName(instancePath: string): string {
  return instancePath
    .split('/')
    .filter((p) => p !== '')
    .map((p, i) => (/^\d+$/.test(p) ? `[${p}]` : i === 0 ? p : `.${p}`))
    .join('');
}

function valueAt(body: unknown, instancePath: string): unknown {
  let value = body;
  for (const part of instancePath.split('/').filter((p) => p !== '')) {
    value =
      typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

function toRefusal(errors: ErrorObject[], body: unknown): Refusal {
  const leaves = errors.filter((e) => !['oneOf', 'anyOf', 'allOf', 'if'].includes(e.keyword));
  const pool = leaves.length > 0 ? leaves : errors;
  const depth = (e: ErrorObject) => e.instancePath.split('/').length + (e.keyword === 'required' ? 1 : 0);
  const deepest = pool.reduce((a, b) => (depth(b) > depth(a) ? b : a));
  const param = paramName(deepest.instancePath);
  if (deepest.keyword === 'required') {
    const missing = String(deepest.params.missingProperty);
    const full = param === '' ? missing : `${param}.${missing}`;
    return {
      status: 400,
      message: `Missing required parameter: '${full}'.`,
      param: full,
      code: 'missing_required_parameter',
    };
  }
  if (deepest.keyword === 'type') {
    const expected = pool
      .filter((e) => e.keyword === 'type' && e.instancePath === deepest.instancePath)
      .map((e) => String(e.params.type));
    const got = jsonTypeName(valueAt(body, deepest.instancePath));
    const wanted = expected.length > 1 ? `one of ${expected.join(' or ')}` : `${expected[0]}`;
    return {
      status: 400,
      message: `Invalid type for '${param}': expected ${wanted}, but got ${got} instead.`,
      param,
      code: 'invalid_type',
    };
  }
  if (
    deepest.keyword === 'minItems' &&
    Array.isArray(valueAt(body, deepest.instancePath)) &&
    (valueAt(body, deepest.instancePath) as unknown[]).length === 0
  ) {
    return {
      status: 400,
      message: `Invalid '${param}': empty array. Expected an array with minimum length ${String(deepest.params.limit)}, but got an empty array instead.`,
      param,
      code: 'empty_array',
    };
  }
  return {
    status: 400,
    message: `Invalid '${param}': ${deepest.message ?? 'invalid value'}.`,
    param,
    code: 'invalid_value',
  };
}

/** Refusal for a Chat Completions body the official schema does not accept, or undefined. */
export const checkOpenAiSchema = schemaCheck(
  'openai-chat-completions.schema.json',
  'CreateChatCompletionRequest',
  true,
);

/** The same for the Responses API (its `oneOf`s carry no usable discriminator). */
export const checkResponsesSchema = schemaCheck('openai-responses.schema.json', 'CreateResponse', false);
