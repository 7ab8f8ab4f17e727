import { openCodeRoute } from './opencode-route.js';
import type { ProviderApi, ResponseFormat, WireApi } from './types.js';

export interface RequestShape {
  /** The model id without the provider prefix. */
  model: string;
  responseFormat?: ResponseFormat['type'];
  /** Whether tools (built-in, MCP or `call_agent`) are offered. */
  hasTools: boolean;
}

export interface RequestProblems {
  /** Settings the wire has no field for: said, then left out of the request. */
  warnings: string[];
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
  const format = shape.responseFormat;
  if (format === undefined) return { warnings: [] };
  if (!FORMATS[wire].has(format)) {
    const instead = wire === 'anthropic' ? ' (a json_schema table is sent as structured output)' : '';
    return {
      warnings: [
        `[params] response_format "${format}" has no equivalent on the ${wire} API and is not sent${instead}`,
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

/** `gemini-2.5-flash`, `gemini-1.5-pro-002`: a versioned Gemini model before 3 (`-latest` aliases are current). */
function geminiBefore3(model: string): boolean {
  const version = /^(?:models\/)?gemini-(\d+)(?:\.\d+)?-/.exec(model);
  return version !== null && Number(version[1]) < 3;
}
