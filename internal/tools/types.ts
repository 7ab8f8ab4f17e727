import type { AgentSpec } from '../agent/spec.js';
import type { JsonObject, ToolSpec } from '../provider/types.js';

/** What a tool gets to know about the run it serves. */
export interface ToolContext {
  /** Absolute, real path of the agent's workdir: the sandbox root for file tools. */
  workdir: string;
  /** Aborted on timeout, Ctrl-C or budget exhaustion: long-running tools must stop. */
  signal: AbortSignal;
  /** Exact host names `url_fetch` may reach; empty = any public host. */
  allowedHosts: string[];
  /** The process environment (tools pick what they need; run_command passes an allow-list). */
  env: NodeJS.ProcessEnv;
  /** The agent's artifact directory, when its artifact system is on (see internal/artifacts). */
  artifacts?: ToolArtifacts;
  /**
   * When the run is traced: the W3C trace context of the span the tool works for (its call's; the
   * agent's for MCP servers), handed to the processes it starts as `TRACEPARENT`.
   */
  traceparent?: string;
}

/** What the file tools need to serve `artifact = true`. */
export interface ToolArtifacts {
  /** Absolute, real path: the second sandbox root. */
  dir: string;
  /** `[artifacts] default_write`: `write_file` without an `artifact` argument writes here. */
  defaultWrite: boolean;
  /** Notes a file written into `dir` (path relative to it). */
  record(path: string, size: number): void;
}

export interface ToolOutput {
  content: string;
  isError: boolean;
}

export interface Tool {
  spec: ToolSpec;
  /** Changes nothing outside: built-ins by kind, MCP tools by their `readOnlyHint` (read-only runs keep only these). */
  readOnly?: boolean;
  /** Never throws for a bad call: errors are returned as `{ isError: true }` results. */
  execute(args: JsonObject, context: ToolContext): Promise<ToolOutput>;
}

/** Names of the built-in tools an agent may list in `tools = [...]`. */
export const BUILTIN_TOOL_NAMES = [
  'list_directory',
  'read_file',
  'write_file',
  'edit_file',
  'run_command',
  'url_fetch',
  'web_search',
  'glob_files',
  'grep_files',
] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

/** The built-ins that change files or run programs: a read-only agent never gets them. */
export const WRITING_TOOL_NAMES: ReadonlySet<string> = new Set(['write_file', 'edit_file', 'run_command']);

/** The tool the runner injects for agents with `sub_agents`. Not listable in `tools`. */
export const CALL_AGENT_TOOL_NAME = 'call_agent';
export const SPAWN_AGENTS_TOOL_NAME = 'spawn_agents';
export const DELEGATE_TASK_TOOL_NAME = 'delegate_task';
export const TASK_OUTPUT_TOOL_NAME = 'task_output';
export const ASK_PARENT_TOOL_NAME = 'ask_parent';

/** The tools of one agent run: built-ins from `tools = [...]` plus those of its MCP servers. */
export interface Toolset {
  tools: Tool[];
  /** Disconnects MCP servers and ends their processes. Safe to call more than once. */
  close(): Promise<void>;
}

export interface ToolsetOptions {
  spec: AgentSpec;
  /** The tool context every tool of this agent gets (sandbox root, signal, hosts, env). */
  context: ToolContext;
  /** `[mcp] ...` connection lines and warnings (name clashes, …), rendered by the caller. */
  report: (
    event: { type: 'mcp'; server: string; message: string } | { type: 'warning'; message: string },
  ) => void;
}
