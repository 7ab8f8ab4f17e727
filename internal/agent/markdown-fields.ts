import { own } from '../config/own.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue } from '../provider/types.js';
import { mapForeignMcpServers } from './foreign-mcp.js';
import { DEFAULT_MARKDOWN_TOOLS, foreignShellTool, mapTools } from './foreign-tools.js';
import { impliedProvider, MODEL_ALIASES } from './model.js';
import type { FieldNote } from './parsed-file.js';

/**
 * Maps the front-matter of Claude Code (`.claude/agents`), Gemini CLI (`.gemini/agents`) and
 * opencode (`.opencode/agent`) files onto axe's fields. Pure: the result is validated by the same
 * schema as TOML and YAML files.
 */

/** Fields of those tools that axe does not support yet: a warning each, never a silent drop. */
const UNSUPPORTED_FIELDS: Readonly<Record<string, string>> = {
  color: 'Claude Code',
  permissionMode: 'Claude Code',
  hooks: 'Claude Code',
  initialPrompt: 'Claude Code',
  isolation: 'Claude Code',
  background: 'Claude Code',
  effort: 'Claude Code',
  display_name: 'Gemini CLI',
  inputs: 'Gemini CLI',
  outputs: 'Gemini CLI',
  run_config: 'Gemini CLI',
  model_config: 'Gemini CLI',
  modelConfig: 'Gemini CLI',
  tool_config: 'Gemini CLI',
  mode: 'opencode',
  permission: 'opencode',
  top_p: 'opencode',
  disable: 'opencode',
  hidden: 'opencode',
  steps: 'opencode',
  maxSteps: 'opencode',
  reasoningEffort: 'opencode',
  textVerbosity: 'opencode',
  prompt: 'opencode (put the prompt in the body)',
};

const RENAMED: Readonly<Record<string, string>> = {
  disallowedTools: 'disallowed_tools',
  maxTurns: 'max_turns',
  allowedHosts: 'allowed_hosts',
  subAgents: 'sub_agents',
  systemPrompt: 'system_prompt',
};

export interface MappedFrontMatter {
  data: JsonObject;
  warnings: FieldNote[];
  errors: FieldNote[];
  /** What axe decided for the file that is worth saying in `validate` and `--verbose`. */
  notes: FieldNote[];
  writtenAs: Record<string, string>;
}

/** The front-matter keys of Claude Code, Gemini CLI and opencode that axe reads or knows. */
export const FOREIGN_FIELD_NAMES: readonly string[] = [
  ...Object.keys(UNSUPPORTED_FIELDS),
  ...Object.keys(RENAMED),
  'tools',
  'allowed-tools',
  'kind',
  'skills',
  'mcpServers',
  'timeout_mins',
  'temperature',
  'inputConfig',
];

export function mapFrontMatter(frontMatter: JsonValue, body: string, fileName: string): MappedFrontMatter {
  const result: MappedFrontMatter = { data: {}, warnings: [], errors: [], notes: [], writtenAs: {} };
  if (!isObject(frontMatter)) {
    result.errors.push({ field: '', message: 'front-matter must be a YAML mapping of fields' });
    return result;
  }
  const { data, warnings, errors, writtenAs } = result;
  // Claude Code's `tools: Agent(worker, tester)`: the agents this one may spawn, axe's sub_agents.
  const spawnable: string[] = [];
  // Claude Code's `Bash(git diff:*)` in tools / disallowedTools: axe's [permissions] rules.
  const allowed: string[] = [];
  const denied: string[] = [];
  const set = (key: string, value: JsonValue, written: string): void => {
    if (Object.hasOwn(data, key)) {
      errors.push({
        field: written,
        message: `gives "${key}" a second time (as "${own(writtenAs, key) ?? key}" too)`,
      });
      return;
    }
    defineOwn(data, key, value);
    if (written !== key) defineOwn(writtenAs, key, written);
  };
  for (const [key, value] of Object.entries(frontMatter)) {
    const origin = own(UNSUPPORTED_FIELDS, key);
    if (origin !== undefined) {
      warnings.push({ field: key, message: `${origin} field not supported by axe yet; ignored` });
    } else if (key === 'memory' && typeof value === 'string') {
      warnings.push({
        field: key,
        message: 'Claude Code memory scopes are not supported; use a [memory] table',
      });
    } else if (
      key === 'tools' ||
      key === 'allowed-tools' ||
      key === 'disallowedTools' ||
      key === 'disallowed_tools'
    ) {
      const allows = key === 'tools' || key === 'allowed-tools';
      const agents = allows ? spawnable : undefined;
      const commands = allows ? allowed : denied;
      set(allows ? 'tools' : 'disallowed_tools', mapTools(value, key, warnings, agents, commands), key);
      const shell = allows ? foreignShellTool(value) : undefined;
      if (shell !== undefined) {
        // Said once, where the file is looked at (validate, --dry-run, --verbose), not on every run.
        result.notes.push({
          field: key,
          message: `"${shell}" is run_command: its commands run without asking anyone first (no approval prompt as in Claude Code)`,
        });
      }
    } else if (key === 'kind') {
      // Gemini CLI: `local` (the default) is what axe runs; `remote` is an A2A agent elsewhere.
      if (value !== 'local')
        errors.push({
          field: key,
          message: `must be "local": Gemini CLI remote (A2A) agents cannot run in axe (got ${JSON.stringify(value)})`,
        });
    } else if (key === 'skills') {
      const skill = mapSkills(value, warnings);
      if (skill !== undefined) set('skill', skill, key);
    } else if (key === 'mcpServers') {
      const mapped = mapForeignMcpServers(value);
      warnings.push(...mapped.warnings.map((message) => ({ field: key, message })));
      errors.push(...mapped.errors.map((message) => ({ field: key, message })));
      set('mcp_servers', mapped.servers, key);
    } else if (key === 'model' && typeof value === 'string') {
      set('model', mapModel(value), key);
    } else if (key === 'inputConfig' && isObject(value) && Object.keys(value).every((k) => k === 'inputs')) {
      // The `inputConfig: { inputs: {…} }` spelling (Gemini's, also written by other agent formats).
      set('input', value.inputs ?? {}, key);
    } else if (key === 'timeout_mins' && typeof value === 'number') {
      set('timeout', Math.round(value * 60), key);
    } else if (key === 'temperature') {
      const params = isObject(data.params) ? data.params : {};
      if (Object.hasOwn(params, 'temperature'))
        errors.push({ field: key, message: 'also given as params.temperature' });
      data.params = { ...params, temperature: value };
    } else if (key === 'params' && isObject(value) && isObject(data.params)) {
      if (Object.hasOwn(value, 'temperature'))
        errors.push({ field: 'temperature', message: 'also given as params.temperature' });
      data.params = { ...value, ...data.params };
    } else {
      set(own(RENAMED, key) ?? key, value, key);
    }
  }
  if (allowed.length > 0 || denied.length > 0) {
    const given = isObject(data.permissions) ? data.permissions : {};
    const list = (value: JsonValue | undefined) => (Array.isArray(value) ? value : []);
    data.permissions = {
      ...given,
      ...(allowed.length > 0 ? { allow: [...list(given.allow), ...allowed] } : {}),
      ...(denied.length > 0 ? { deny: [...list(given.deny), ...denied] } : {}),
    };
  }
  if (spawnable.length > 0) {
    const given = Array.isArray(data.sub_agents) ? data.sub_agents : [];
    data.sub_agents = [...new Set([...given, ...spawnable])];
    if (given.length === 0) defineOwn(writtenAs, 'sub_agents', 'tools');
  }
  if (!Object.hasOwn(frontMatter, 'tools') && !Object.hasOwn(frontMatter, 'allowed-tools')) {
    data.tools = [...DEFAULT_MARKDOWN_TOOLS];
    result.notes.push({
      field: 'tools',
      message: `not given: the read-only tools ${DEFAULT_MARKDOWN_TOOLS.join(', ')} (what Claude Code and opencode let an agent use without asking)`,
    });
  }
  withNameModelAndPrompt(data, fileName, body, errors, 'system_prompt');
  return result;
}

/**
 * What every front-matter format leaves to its file: the name (the file's), the model (`inherit`)
 * and the system prompt (the Markdown body; `promptField` names the field that also gives it).
 */
export function withNameModelAndPrompt(
  data: JsonObject,
  fileName: string,
  body: string,
  errors: MappedFrontMatter['errors'],
  promptField: string,
): void {
  if (!Object.hasOwn(data, 'name')) data.name = fileName;
  if (!Object.hasOwn(data, 'model')) data.model = 'inherit';
  const prompt = body.trim();
  if (prompt === '') return;
  if (Object.hasOwn(data, 'system_prompt')) {
    errors.push({
      field: promptField,
      message: 'given both in the front-matter and as the Markdown body; keep one',
    });
  } else data.system_prompt = prompt;
}

export function mapModel(model: string): string {
  const trimmed = model.trim();
  if (trimmed === 'inherit' || trimmed.includes('/')) return trimmed;
  const alias = own(MODEL_ALIASES, trimmed);
  if (alias) return alias;
  const provider = impliedProvider(trimmed);
  return provider ? `${provider}/${trimmed}` : trimmed;
}

/** Claude Code's `skills` (a list or comma-separated names): axe loads one skill, the first. */
function mapSkills(value: JsonValue, warnings: FieldNote[]): JsonValue | undefined {
  const names =
    typeof value === 'string'
      ? value
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean)
      : value;
  if (!Array.isArray(names)) return value;
  if (names.length > 1) {
    warnings.push({
      field: 'skills',
      message: `axe loads one skill: ${JSON.stringify(names[0])} is used, ${names
        .slice(1)
        .map((name) => JSON.stringify(name))
        .join(', ')} ignored`,
    });
  }
  return names[0];
}

/** Sets `key` as an own property even when it is `__proto__`. */
export function defineOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
