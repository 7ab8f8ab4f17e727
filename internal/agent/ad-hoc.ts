import { suggestion } from '../config/did-you-mean.js';
import { FileProblem } from '../config/file-problem.js';
import { ConfigError } from '../errors.js';
import { BUILTIN_TOOL_NAMES } from '../tools/types.js';
import type { AgentSpec } from './spec.js';
import { toSpec } from './to-spec.js';

/** The name an agent run without a file goes by (in `--verbose`, the run record, the tree). */
export const AD_HOC_AGENT_NAME = 'ad-hoc';

export interface AdHocRequest {
  /** `provider/model` or an alias: `-m`, else config.toml's `[defaults] model`. */
  model: string;
  /** Where the model came from, for an error about it (`--model`, `[defaults] model`). */
  modelSource: string;
  /** `--tools a,b`: built-in tool names (none when undefined). */
  tools?: string;
  /** `--system`: the whole system prompt. */
  systemPrompt?: string;
  env: NodeJS.ProcessEnv;
}

/**
 * `axe run -m provider/model -p …` with no agent name: an agent with only a model, the tools
 * asked for and the system prompt given, built as a TOML file with those fields would be (every
 * default applied), so the run that follows is any agent's run.
 */
export function adHocSpec(request: AdHocRequest): AgentSpec {
  const tools = toolList(request.tools);
  try {
    return toSpec(
      {
        name: AD_HOC_AGENT_NAME,
        model: request.model,
        ...(request.systemPrompt !== undefined ? { system_prompt: request.systemPrompt } : {}),
        ...(tools.length > 0 ? { tools } : {}),
      },
      { file: request.modelSource, name: AD_HOC_AGENT_NAME, format: 'toml', env: request.env, warnings: [] },
    );
  } catch (error) {
    // toSpec names a file and field: here the flag or config key is the place.
    if (error instanceof FileProblem) throw new ConfigError(`${request.modelSource}: ${error.reason}`);
    throw error;
  }
}

/** `--tools read_file,list_directory` → the names, each a built-in tool. */
function toolList(text: string | undefined): string[] {
  if (text === undefined) return [];
  const names = [...new Set(text.split(',').map((name) => name.trim()))].filter((name) => name !== '');
  const known: readonly string[] = BUILTIN_TOOL_NAMES;
  for (const name of names) {
    if (!known.includes(name)) {
      throw new ConfigError(
        `--tools: unknown tool "${name}"${suggestion(name, known)} (built-in tools: ${known.join(', ')})`,
      );
    }
  }
  return names;
}
