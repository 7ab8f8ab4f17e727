import { optObject, optString } from './json.js';
import type { JsonObject, ToolSpec } from './types.js';

/** OpenAI's function-tool shapes, which Ollama's chat API copies. */

export function functionToolsToWire(tools: readonly ToolSpec[]): JsonObject[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/**
 * `{ id?, function: { name, arguments } }` with the arguments as JSON text, whether they came as
 * a string (OpenAI) or an object (Ollama); `fallbackId` stands in when the wire sends no id.
 */
export function functionCallFromWire(
  call: JsonObject,
  fallbackId: string,
): { id: string; name: string; rawArguments: string } {
  const fn = optObject(call.function);
  const args = fn?.arguments;
  return {
    id: optString(call.id) ?? fallbackId,
    name: optString(fn?.name) ?? '',
    rawArguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
  };
}
