import type { JsonObject, ToolSpec } from '../provider/types.js';
import { SandboxError } from './sandbox.js';
import type { ToolContext } from './types.js';

/** The file tools that take Go axe's `artifact` argument, with the verb their description uses. */
export const ARTIFACT_TOOLS: Readonly<Record<string, string>> = {
  write_file: 'write to',
  read_file: 'read from',
  list_directory: 'list',
};

/** `spec` with the `artifact` parameter: offered only to an agent whose artifact system is on. */
export function withArtifactParameter(spec: ToolSpec, verb: string): ToolSpec {
  const parameters = spec.parameters;
  const properties = parameters.properties as JsonObject;
  return {
    ...spec,
    parameters: {
      ...parameters,
      properties: {
        ...properties,
        artifact: {
          type: 'boolean',
          description: `When true, ${verb} the artifact directory instead of the working directory.`,
        },
      },
    },
  };
}

/** Where a file tool works: the workdir, or the artifact directory. */
export interface ToolRoot {
  root: string;
  artifact: boolean;
}

/**
 * Go axe's rule: `artifact` true (or `"true"` in any case) → the artifact directory; any other
 * given value → the workdir; absent or empty → `defaultToArtifacts` when the artifact system is
 * on (write_file with `default_write`), else the workdir. Asking for it when it is off is an error.
 */
export function toolRoot(args: JsonObject, context: ToolContext, defaultToArtifacts = false): ToolRoot {
  const value = args.artifact;
  const given = value !== undefined && value !== null && value !== '';
  const wanted = given
    ? value === true || (typeof value === 'string' && value.toLowerCase() === 'true')
    : defaultToArtifacts && context.artifacts !== undefined;
  if (!wanted) return { root: context.workdir, artifact: false };
  if (!context.artifacts) throw new Error('artifact directory not configured for this agent');
  return { root: context.artifacts.dir, artifact: true };
}

/** Runs a file tool step against `root`; sandbox messages about the artifact directory say so. */
export async function inRoot<T>(root: ToolRoot, step: () => Promise<T>): Promise<T> {
  if (!root.artifact) return step();
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof SandboxError)) throw error;
    throw new SandboxError(error.message.replaceAll('the workdir', 'the artifact directory'));
  }
}
