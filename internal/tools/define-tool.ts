import { errorMessage } from '../errors.js';
import type { JsonObject, ToolSpec } from '../provider/types.js';
import type { Tool, ToolContext, ToolOutput } from './types.js';

/** A tool body: returns its text, or throws an Error whose message becomes the error result. */
export type ToolBody = (args: JsonObject, context: ToolContext) => Promise<string | ToolOutput>;

/** Wraps a tool body so that it never throws: every failure becomes an `isError` result. */
export function defineTool(spec: ToolSpec, body: ToolBody): Tool {
  return {
    spec,
    async execute(args, context) {
      try {
        const result = await body(args, context);
        return typeof result === 'string' ? { content: result, isError: false } : result;
      } catch (error) {
        if (context.signal.aborted) return { content: `${spec.name}: cancelled`, isError: true };
        return { content: errorMessage(error), isError: true };
      }
    },
  };
}

/** JSON Schema for a tool's parameters: an object with the given properties. */
export function objectSchema(properties: Record<string, JsonObject>, required: string[]): JsonObject {
  return { type: 'object', properties, required, additionalProperties: false };
}
