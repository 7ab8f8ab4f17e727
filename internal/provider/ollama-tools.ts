import { isObject } from './json.js';
import { describeDropped } from './schema-notes.js';
import type { JsonObject, JsonValue, ToolSpec } from './types.js';

/**
 * Ollama's server decodes tool parameters into fixed Go structs and silently drops every other
 * key (`api.ToolFunctionParameters`, `api.ToolProperty`; the `ollama` SDK's `Tool` type): a
 * `minimum` or a nested object's `properties` never reaches the model. Each schema is reduced to
 * those keys and what is dropped is written into the description, so the model still sees it.
 */
const PARAMETER_KEYS = new Set(['type', '$defs', 'items', 'required', 'properties']);
const PROPERTY_KEYS = new Set(['type', 'items', 'description', 'enum']);

export function ollamaTools(tools: readonly ToolSpec[]): JsonObject[] {
  return tools.map((tool) => {
    const { kept, dropped } = split(tool.parameters, PARAMETER_KEYS);
    // `additionalProperties: false` only forbids arguments the model has no reason to invent.
    if (dropped.additionalProperties === false) delete dropped.additionalProperties;
    if (isObject(kept.properties)) {
      kept.properties = Object.fromEntries(
        Object.entries(kept.properties).map(([name, schema]) => [name, reducedProperty(schema)]),
      );
    }
    return {
      type: 'function',
      function: {
        name: tool.name,
        description: describeDropped(tool.description, dropped) ?? '',
        parameters: kept,
      },
    };
  });
}

function reducedProperty(schema: JsonValue): JsonValue {
  if (!isObject(schema)) return schema;
  const { kept, dropped } = split(schema, PROPERTY_KEYS);
  const description = describeDropped(
    typeof kept.description === 'string' ? kept.description : undefined,
    dropped,
  );
  return description === undefined ? kept : { ...kept, description };
}

function split(schema: JsonObject, keep: ReadonlySet<string>): { kept: JsonObject; dropped: JsonObject } {
  const kept: JsonObject = {};
  const dropped: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (keep.has(key)) kept[key] = value;
    else if (key !== '$schema') dropped[key] = value;
  }
  return { kept, dropped };
}
