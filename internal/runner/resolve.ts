import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { checkInputs, type InputValues, substituteInputs } from '../agent/inputs.js';
import { parseModelRef, qualifiedModelName } from '../agent/model.js';
import { type AgentSpec, type ModelRef, skillMayBeMissing } from '../agent/spec.js';
import { skillPath } from '../config/paths.js';
import { ConfigError } from '../errors.js';
import { fsPromises } from '../fs/promises.js';
import { type LoadedMemory, loadMemory, withMemory } from '../memory/memory.js';
import type { JsonValue } from '../provider/types.js';
import { listedToolNames } from '../tools/listed.js';
import {
  CALL_AGENT_TOOL_NAME,
  DELEGATE_TASK_TOOL_NAME,
  SPAWN_AGENTS_TOOL_NAME,
  WRITING_TOOL_NAMES,
} from '../tools/types.js';
import { buildSystemPrompt, type ContextFile, readContextFiles, readSkill } from './prompt.js';

export interface ResolveOptions {
  configDir: string;
  /** The directory a relative workdir is resolved against (default: the process's). */
  cwd?: string;
  /** Where in the tree the agent runs (default 0) and the tree's max depth (default the spec's). */
  depth?: number;
  maxDepth?: number;
  /** The model of an agent whose file says `inherit`: the parent's. */
  inheritedModel?: ModelRef;
  /** `--model provider/model`, `--skill`, `--workdir` (top-level agent only). */
  overrides?: { model?: string; skill?: string; workdir?: string };
  /** Values for the agent's typed inputs, unchecked (a missing required one is an InputError). */
  inputs?: Readonly<Record<string, JsonValue>>;
  /** Where the default memory file lives (`XDG_DATA_HOME`, `HOME`); needed when memory is on. */
  env?: NodeJS.ProcessEnv;
}

/** Everything a run of one agent uses, resolved without network or key. */
export interface ResolvedAgentRun {
  model: ModelRef;
  /** `provider/model`. */
  modelName: string;
  /** Absolute, real path. */
  workdir: string;
  /** The full system prompt sent: system_prompt + skill + context files (+ memory). */
  systemPrompt: string;
  /** The agent's memory when `[memory] enabled`: its file, the entries in the prompt, warnings. */
  memory?: LoadedMemory;
  /** Absolute path and content of the skill, when there is one. */
  skill?: { path: string; content: string };
  files: ContextFile[];
  /** Built-in tool names offered (MCP tools are known only once connected), then the delegation tools. */
  tools: string[];
  /** Whether `call_agent` is offered (sub_agents non-empty, below the max depth). */
  callsAgents: boolean;
  /** Whether `spawn_agents` is offered (`spawn = true`, below the max depth). */
  spawns: boolean;
  /** Whether `delegate_task` is offered (`delegate = true`, below the max depth). */
  delegates: boolean;
  /** At the max depth an agent gets no tools at all. */
  atMaxDepth: boolean;
  /** Its typed inputs' values, checked and of their declared types. */
  inputs: InputValues;
  /** `query` with the inputs substituted: the start of its first user message. */
  query?: string;
  /** What is left out and said, not refused (a Claude Code skill that is not there). */
  warnings: string[];
}

export async function resolveAgentRun(spec: AgentSpec, options: ResolveOptions): Promise<ResolvedAgentRun> {
  const model = resolveModel(spec, options);
  const inputs = checkInputs(spec, options.inputs ?? {});
  const { workdir: workdirFlag, skill: skillFlag } = options.overrides ?? {};
  const workdir = resolveWorkdir(
    workdirFlag ?? spec.workdir,
    options.cwd,
    workdirFlag !== undefined ? '--workdir' : `${spec.source}: workdir`,
  );
  const skillName = skillFlag ?? spec.skill;
  const skillLabel = skillFlag !== undefined ? '--skill' : spec.source;
  const optionalSkill = skillMayBeMissing(spec, skillFlag !== undefined);
  const skillFile =
    skillName !== undefined && skillName !== '' ? skillPath(skillName, options.configDir) : '';
  const missing =
    optionalSkill && skillFile !== ''
      ? !(await fsPromises()
          .access(skillFile)
          .then(
            () => true,
            () => false,
          ))
      : false;
  const warnings = missing
    ? [`${spec.source}: skill "${skillName}" not found (${skillFile}): run without it`]
    : [];
  const skill =
    skillName !== undefined && skillName !== '' && !missing
      ? { path: skillFile, content: await readSkill(skillName, options.configDir, skillLabel) }
      : undefined;
  const files = await readContextFiles(spec.files, workdir, spec.source);
  const memory = spec.memory.enabled
    ? await loadMemory(spec.name, spec.memory, options.env ?? {})
    : undefined;
  const depth = options.depth ?? 0;
  const atMaxDepth = depth >= (options.maxDepth ?? spec.subAgentsConfig.maxDepth);
  const listed = atMaxDepth ? [] : listedToolNames(spec);
  const tools = spec.readOnly ? listed.filter((name) => !WRITING_TOOL_NAMES.has(name)) : listed;
  // A delegation tool: offered when its field turns it on, below the max depth, and not disallowed.
  const delegation = (name: string, on: boolean): boolean => {
    const offered = on && !atMaxDepth && !spec.disallowedTools.includes(name);
    if (offered) tools.push(name);
    return offered;
  };
  const callsAgents = delegation(CALL_AGENT_TOOL_NAME, spec.subAgents.length > 0);
  const spawns = delegation(SPAWN_AGENTS_TOOL_NAME, spec.subAgentsConfig.spawn);
  const delegates = delegation(DELEGATE_TASK_TOOL_NAME, spec.subAgentsConfig.delegate);
  return {
    model,
    modelName: qualifiedModelName(model),
    workdir,
    systemPrompt: withMemory(
      buildSystemPrompt(
        substituteInputs(spec.systemPrompt, spec, inputs, { cwd: workdir }),
        skill?.content ?? '',
        files,
      ),
      memory?.entries ?? '',
    ),
    ...(memory ? { memory } : {}),
    ...(skill ? { skill } : {}),
    files,
    tools,
    callsAgents,
    spawns,
    delegates,
    atMaxDepth,
    inputs,
    ...(spec.query !== undefined
      ? { query: substituteInputs(spec.query, spec, inputs, { cwd: workdir }) }
      : {}),
    warnings,
  };
}

/** The model an agent runs on: `--model`, else its file's, else its parent's (`inherit`). */
export function resolveModel(
  spec: AgentSpec,
  options: Pick<ResolveOptions, 'overrides' | 'inheritedModel'>,
): ModelRef {
  const override = options.overrides?.model;
  const overridden = override !== undefined && override !== '' ? parseFlagModel(override) : undefined;
  const model = overridden ?? spec.model ?? options.inheritedModel;
  if (!model) {
    throw new ConfigError(`${spec.source}: model: "inherit" needs a parent agent or --model provider/model`);
  }
  return model;
}

function parseFlagModel(text: string): ModelRef | undefined {
  try {
    return parseModelRef(text);
  } catch (error) {
    throw new ConfigError(`--model: ${(error as Error).message}`);
  }
}

/** Synchronous: two system calls, cheaper than two trips through the thread pool per sub-agent. */
function resolveWorkdir(workdir: string | undefined, cwd: string | undefined, label: string): string {
  const absolute = path.resolve(cwd ?? process.cwd(), workdir ?? '.');
  try {
    const real = realpathSync.native(absolute);
    if (statSync(real).isDirectory()) return real;
  } catch {
    // reported below
  }
  throw new ConfigError(`${label}: not a directory: ${absolute}`);
}
