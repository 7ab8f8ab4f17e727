import { isObject } from './json.js';
import { openCodeRoute } from './opencode-route.js';
import type { JsonObject, JsonValue, ProviderApi, ResponseFormat, WireApi } from './types.js';

export interface RequestShape {
  /** The model id without the provider prefix. */
  model: string;
  responseFormat?: ResponseFormat['type'];
  /** Whether tools (built-in, MCP or `call_agent`) are offered. */
  hasTools: boolean;
  /** `[output] schema`, sent as `submit_result`'s parameter. */
  outputSchema?: JsonObject;
  /** `[params] prompt_caching`. */
  promptCaching?: boolean;
}

export interface RequestProblems {
  /** Settings the wire has no field for (said, then left out), or does not pass on to the model. */
  warnings: {
    field: 'params.response_format' | 'params.prompt_caching' | 'output.schema';
    message: string;
  }[];
  /** A combination the API refuses: the run stops before any request (exit 2). */
  error?: string;
}

/** The wires that have a field for each response format (Bedrock's Converse API has neither). */
const FORMATS: Record<WireApi, ReadonlySet<ResponseFormat['type']>> = {
  openai: new Set(['text', 'json_object', 'json_schema']),
  responses: new Set(['text', 'json_object', 'json_schema']),
  ollama: new Set(['text', 'json_object', 'json_schema']),
  google: new Set(['text', 'json_object', 'json_schema']),
  anthropic: new Set(['text', 'json_schema']),
  bedrock: new Set(['text']),
};

/** What `api` cannot send of an agent's request settings, before anything is sent. */
export function requestProblems(api: ProviderApi, shape: RequestShape): RequestProblems {
  const wire = api === 'opencode' ? openCodeRoute(shape.model, '').api : api;
  const problems = formatProblems(wire, shape);
  if (shape.promptCaching && wire !== 'anthropic' && wire !== 'bedrock') {
    problems.warnings.push({
      field: 'params.prompt_caching',
      message: `[params] prompt_caching is Anthropic's cache breakpoint; the ${wire} API has no such field and it is not sent`,
    });
  }
  const unread = shape.outputSchema ? unreadKeywords(wire, shape.outputSchema) : [];
  if (unread.length > 0) {
    problems.warnings.push({
      field: 'output.schema',
      message: `[output] schema: the ${wire} API does not pass ${unread.join(', ')} of a tool parameter on to the model, so it is not told them; axe still checks every submit_result against the whole schema`,
    });
  }
  return problems;
}

function formatProblems(wire: WireApi, shape: RequestShape): RequestProblems {
  const format = shape.responseFormat;
  if (format === undefined) return { warnings: [] };
  if (!FORMATS[wire].has(format)) {
    const instead = wire === 'anthropic' ? ' (a json_schema table is sent as structured output)' : '';
    return {
      warnings: [
        {
          field: 'params.response_format',
          message: `[params] response_format "${format}" has no equivalent on the ${wire} API and is not sent${instead}`,
        },
      ],
    };
  }
  if (wire === 'google' && format !== 'text' && shape.hasTools && geminiBefore3(shape.model)) {
    return {
      warnings: [],
      error: `[params] response_format: ${shape.model} refuses a JSON response format together with tools (Gemini models before 3 answer 400); remove response_format or the tools, or use a Gemini 3 model`,
    };
  }
  return { warnings: [] };
}

/**
 * The keywords of a tool parameter's schema a wire reads: Gemini's `parametersJsonSchema` takes
 * its structured-output subset and ignores the rest; Ollama keeps a parameter's type, items,
 * description and enum (`ollama-tools.ts` turns the rest into description text).
 */
const READ_KEYWORDS: Partial<Record<WireApi, ReadonlySet<string>>> = {
  google: new Set([
    ...['$id', '$defs', '$ref', '$anchor', '$schema', 'type', 'format', 'title', 'description', 'enum'],
    ...['items', 'prefixItems', 'minItems', 'maxItems', 'minimum', 'maximum', 'anyOf', 'oneOf'],
    ...['properties', 'additionalProperties', 'required', 'propertyOrdering'],
  ]),
  ollama: new Set(['type', 'items', 'description', 'enum']),
};

function unreadKeywords(wire: WireApi, schema: JsonObject): string[] {
  const read = READ_KEYWORDS[wire];
  if (!read) return [];
  const unread = new Set<string>();
  const walk = (node: JsonValue, top: boolean): void => {
    if (!isObject(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (!read.has(key)) unread.add(key);
      // Ollama reads only the parameter's own keys; nothing nested is walked.
      if (wire === 'ollama' && !top) continue;
      if (key === 'properties' || key === '$defs')
        for (const child of Object.values(isObject(value) ? value : {})) walk(child, false);
      else if (key === 'items' || key === 'additionalProperties') walk(value, false);
      else if (Array.isArray(value) && ['prefixItems', 'anyOf', 'oneOf'].includes(key))
        for (const child of value) walk(child, false);
    }
  };
  walk(schema, true);
  return [...unread];
}

/** `gemini-2.5-flash`, `gemini-1.5-pro-002`: a versioned Gemini model before 3 (`-latest` aliases are current). */
function geminiBefore3(model: string): boolean {
  const version = /^(?:models\/)?gemini-(\d+)(?:\.\d+)?-/.exec(model);
  return version !== null && Number(version[1]) < 3;
}
