import { own } from '../config/own.js';
import type { JsonObject, JsonValue } from '../provider/types.js';
import { BUILTIN_TOOL_NAMES } from '../tools/types.js';
import { impliedProvider, MODEL_ALIASES } from './model.js';

/**
 * Maps the front-matter of Claude Code (`.claude/agents`), Gemini CLI (`.gemini/agents`) and
 * opencode (`.opencode/agent`) files onto axe's fields. Pure: the result is validated by the same
 * schema as TOML and YAML files.
 */

/** Fields of those tools that axe does not support yet: a warning each, never a silent drop. */
const UNSUPPORTED_FIELDS: Readonly<Record<string, string>> = {
  color: 'Claude Code',
  permissionMode: 'Claude Code',
  skills: 'Claude Code',
  hooks: 'Claude Code',
  mcpServers: 'Claude Code (use mcp_servers)',
  isolation: 'Claude Code',
  background: 'Claude Code',
  effort: 'Claude Code',
  kind: 'Gemini CLI',
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

/** Other tools' tool names (lower-cased) → axe built-ins; null = no axe equivalent yet. */
const FOREIGN_TOOLS: Readonly<Record<string, string | null>> = {
  read: 'read_file',
  write: 'write_file',
  edit: 'edit_file',
  multiedit: 'edit_file',
  replace: 'edit_file',
  bash: 'run_command',
  run_shell_command: 'run_command',
  webfetch: 'url_fetch',
  web_fetch: 'url_fetch',
  websearch: 'web_search',
  google_web_search: 'web_search',
  ls: 'list_directory',
  list: 'list_directory',
  glob: null,
  grep: null,
  search_file_content: null,
  read_many_files: null,
  task: null,
  todowrite: null,
  todoread: null,
  notebookedit: null,
  notebookread: null,
  save_memory: null,
  patch: null,
};

export interface MappedFrontMatter {
  data: JsonObject;
  warnings: { field: string; message: string }[];
  errors: { field: string; message: string }[];
  writtenAs: Record<string, string>;
}

export function mapFrontMatter(frontMatter: JsonValue, body: string, fileName: string): MappedFrontMatter {
  const result: MappedFrontMatter = { data: {}, warnings: [], errors: [], writtenAs: {} };
  if (frontMatter === null || typeof frontMatter !== 'object' || Array.isArray(frontMatter)) {
    result.errors.push({ field: '', message: 'front-matter must be a YAML mapping of fields' });
    return result;
  }
  const { data, warnings, errors, writtenAs } = result;
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
    } else if (key === 'tools' || key === 'disallowedTools' || key === 'disallowed_tools') {
      set(key === 'tools' ? 'tools' : 'disallowed_tools', mapTools(value, key, warnings), key);
    } else if (key === 'model' && typeof value === 'string') {
      set('model', mapModel(value), key);
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
  if (!Object.hasOwn(data, 'name')) data.name = fileName;
  if (!Object.hasOwn(data, 'model')) data.model = 'inherit';
  const prompt = body.trim();
  if (prompt !== '') {
    if (Object.hasOwn(data, 'system_prompt')) {
      errors.push({
        field: 'system_prompt',
        message: 'given both in the front-matter and as the Markdown body; keep one',
      });
    } else {
      data.system_prompt = prompt;
    }
  }
  return result;
}

function mapModel(model: string): string {
  const trimmed = model.trim();
  if (trimmed === 'inherit' || trimmed.includes('/')) return trimmed;
  const alias = own(MODEL_ALIASES, trimmed);
  if (alias) return alias;
  const provider = impliedProvider(trimmed);
  return provider ? `${provider}/${trimmed}` : trimmed;
}

/** `tools` as a YAML list, a comma-separated string, or opencode's `{ name: true|false }` table. */
function mapTools(value: JsonValue, field: string, warnings: MappedFrontMatter['warnings']): JsonValue {
  let names: JsonValue[];
  if (typeof value === 'string')
    names = value
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
  else if (Array.isArray(value)) names = value;
  else if (isObject(value))
    names = Object.entries(value)
      .filter(([, on]) => on === true)
      .map(([name]) => name);
  else return value;
  const mapped: JsonValue[] = [];
  for (const name of names) {
    if (typeof name !== 'string') {
      mapped.push(name);
      continue;
    }
    const axeName = mapToolName(name, field, warnings);
    if (axeName !== undefined && !mapped.includes(axeName)) mapped.push(axeName);
  }
  return mapped;
}

function mapToolName(
  name: string,
  field: string,
  warnings: MappedFrontMatter['warnings'],
): string | undefined {
  if ((BUILTIN_TOOL_NAMES as readonly string[]).includes(name)) return name;
  if (name.startsWith('mcp__')) {
    warnings.push({ field, message: `"${name}": MCP tools come from mcp_servers, not ${field}; ignored` });
    return undefined;
  }
  const pattern = /^([A-Za-z_]+)\((.*)\)$/.exec(name);
  const base = pattern?.[1] ?? name;
  const key = base.toLowerCase();
  if (!Object.hasOwn(FOREIGN_TOOLS, key)) return name;
  const axeName = own(FOREIGN_TOOLS, key);
  if (axeName === null || axeName === undefined) {
    warnings.push({ field, message: `"${name}" has no axe equivalent yet; ignored` });
    return undefined;
  }
  if (pattern)
    warnings.push({
      field,
      message: `"${name}": argument patterns are not supported; all of ${axeName} is allowed`,
    });
  return axeName;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `key` as an own property even when it is `__proto__`. */
function defineOwn<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
