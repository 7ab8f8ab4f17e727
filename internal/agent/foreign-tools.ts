import { own } from '../config/own.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue } from '../provider/types.js';
import { BUILTIN_TOOL_NAMES } from '../tools/types.js';
import type { FieldNote } from './parsed-file.js';

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
  glob: 'glob_files',
  grep: 'grep_files',
  grep_search: 'grep_files',
  agent: null,
  search_file_content: 'grep_files',
  read_many_files: null,
  task: null,
  todowrite: null,
  todoread: null,
  notebookedit: null,
  notebookread: null,
  save_memory: null,
  patch: null,
  // Claude Code's other tools, and the ones of Gemini CLI and opencode, that axe has no match for.
  bashoutput: null,
  killbash: null,
  killshell: null,
  skill: null,
  slashcommand: null,
  exitplanmode: null,
  enterplanmode: null,
  askuserquestion: null,
  taskcreate: null,
  taskget: null,
  tasklist: null,
  taskupdate: null,
  taskoutput: null,
  taskstop: null,
  sendmessage: null,
  listmcpresourcestool: null,
  readmcpresourcetool: null,
  lsp: null,
  write_todos: null,
  web_search: 'web_search',
  codesearch: null,
  question: null,
};

/**
 * What a Markdown agent without `tools` may use: the tools Claude Code and opencode let an agent
 * run without asking — the read-only ones.
 */
export const DEFAULT_MARKDOWN_TOOLS = ['list_directory', 'read_file', 'glob_files', 'grep_files'] as const;

/**
 * `tools` as a YAML list, a comma-separated string, or opencode's `{ name: true|false }` table,
 * with Claude Code / Gemini CLI / opencode tool names mapped to axe's. `Agent(a, b)` adds to
 * `spawnable` (when given) instead.
 */
export function mapTools(
  value: JsonValue,
  field: string,
  warnings: FieldNote[],
  spawnable: string[] | undefined,
  commands?: string[],
): JsonValue {
  let names: JsonValue[];
  // Commas inside parentheses belong to the tool: `Read, Agent(worker, tester)`.
  if (typeof value === 'string')
    names = (value.match(/[^,(]+(?:\([^)]*\))?/g) ?? []).map((name) => name.trim()).filter(Boolean);
  else if (Array.isArray(value)) names = value;
  else if (isObject(value)) return toggledTools(value, field, warnings, spawnable);
  else return value;
  const mapped: JsonValue[] = [];
  for (const name of names) {
    if (typeof name !== 'string') {
      mapped.push(name);
      continue;
    }
    const command = commandPattern(name);
    if (command !== undefined && commands) {
      // `Bash(git diff:*)`: run_command, with a [permissions] rule for the command.
      commands.push(command);
      if (field !== 'tools' && field !== 'allowed-tools') continue;
    }
    const axeName = command !== undefined ? 'run_command' : mapToolName(name, field, warnings, spawnable);
    if (axeName !== undefined && !mapped.includes(axeName)) mapped.push(axeName);
  }
  return mapped;
}

/**
 * The shell tool of another format (`Bash`, Gemini CLI's `run_shell_command`) that `value` turns
 * on, as written: it becomes run_command, whose commands run without anyone approving them.
 */
export function foreignShellTool(value: JsonValue): string | undefined {
  const names =
    typeof value === 'string'
      ? value.split(',').map((name) => name.trim())
      : Array.isArray(value)
        ? value
        : isObject(value)
          ? Object.keys(value).filter((name) => value[name] === true)
          : [];
  return names.find(
    (name): name is string =>
      typeof name === 'string' &&
      own(FOREIGN_TOOLS, name.replace(/\(.*$/, '').toLowerCase()) === 'run_command',
  );
}

/**
 * opencode's `{ name: true | false }`: changes to the default tools — `true` adds a tool, `false`
 * takes one away (`{ write: false }` is the default set without write_file). `"*"` sets them all
 * first: `{ "*": false, read: true }` is read_file alone.
 */
function toggledTools(
  value: JsonObject,
  field: string,
  warnings: FieldNote[],
  spawnable: string[] | undefined,
): JsonValue {
  const all = value['*'];
  let tools: string[] =
    all === false ? [] : all === true ? [...BUILTIN_TOOL_NAMES] : [...DEFAULT_MARKDOWN_TOOLS];
  for (const [name, on] of Object.entries(value)) {
    if (name === '*' && typeof all === 'boolean') continue;
    // Turning off a tool axe does not have needs no word.
    const axeName = mapToolName(name, field, on === true ? warnings : [], spawnable);
    if (axeName === undefined) continue;
    if (on === true && !tools.includes(axeName)) tools.push(axeName);
    else if (on === false) tools = tools.filter((tool) => tool !== axeName);
  }
  return tools;
}

/**
 * The command prefix of Claude Code's `Bash(git diff:*)` (also `Bash(git diff *)` and the exact
 * `Bash(npm test)`, which axe reads as a prefix too); undefined for any other tool name.
 */
export function commandPattern(name: string): string | undefined {
  const inner = /^bash\((.*)\)$/i.exec(name.trim())?.[1]?.trim();
  if (inner === undefined || inner === '' || inner === '*') return undefined;
  const prefix = inner.replace(/(?::\*| \*)$/, '').trim();
  return prefix === '' || prefix.includes('*') ? undefined : prefix;
}

function mapToolName(
  name: string,
  field: string,
  warnings: FieldNote[],
  spawnable: string[] | undefined,
): string | undefined {
  if ((BUILTIN_TOOL_NAMES as readonly string[]).includes(name)) return name;
  if (name.includes('*')) {
    warnings.push({ field, message: `"${name}": tool wildcards are not supported; list the tools; ignored` });
    return undefined;
  }
  if (name.startsWith('mcp__')) {
    warnings.push({ field, message: `"${name}": MCP tools come from mcp_servers, not ${field}; ignored` });
    return undefined;
  }
  const pattern = /^([A-Za-z_]+)\((.*)\)$/.exec(name);
  const base = pattern?.[1] ?? name;
  const key = base.toLowerCase();
  if (pattern && spawnable && (key === 'agent' || key === 'task')) {
    spawnable.push(
      ...(pattern[2] ?? '')
        .split(',')
        .map((agent) => agent.trim())
        .filter(Boolean),
    );
    return undefined;
  }
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
