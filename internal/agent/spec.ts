import type { JsonObject, ResponseFormat, RetryPolicy } from '../provider/types.js';

/**
 * The one normalised agent definition, whatever the file format (TOML, Markdown front-matter,
 * YAML). Defaults are applied by the loader, so consumers never re-derive them.
 */
export interface AgentSpec {
  /** The CLI name: the file's base name without extension. */
  name: string;
  /** The `name` field inside the file, when it differs from the file name. */
  declaredName?: string;
  description: string;
  /** `display_name`: a longer name for people (a Codex definition's `displayName`). */
  displayName?: string;
  /** Absolute path of the file this spec came from (for error messages). */
  source: string;
  format: 'toml' | 'markdown' | 'yaml';
  /**
   * `provider/model` as resolved (aliases such as `sonnet` expanded). `undefined` when the file
   * says `inherit` (or gives none in a Markdown file): the parent's model is used, or `--model`.
   */
  model?: ModelRef;
  systemPrompt: string;
  /** `query`: the start of the first user message, inputs substituted (Codex `promptConfig.query`). */
  query?: string;
  /** Where the definition's shape comes from when not axe's own: a Codex definition (`agentType`). */
  dialect?: 'codex';
  /** As written in the file; resolved against the config dir at run time. */
  skill?: string;
  /** Globs relative to the workdir. */
  files: string[];
  /** Expanded (`~`, `$VAR`) but not yet made absolute; undefined = the current directory. */
  workdir?: string;
  /** Seconds for the whole run; undefined = flag or default 120. */
  timeout?: number;
  stream?: boolean;
  /** Built-in tool names (and, later, MCP tool names) the agent may use. */
  tools: string[];
  disallowedTools: string[];
  allowedHosts: string[];
  /** `read_only = true`: no writing tools for it and the agents it calls. */
  readOnly: boolean;
  /** `tier`: the tools it may use without asking (undefined: every tool of `tools`). */
  tier?: ToolTier;
  /** `[permissions]`: `run_command` rules by command prefix (empty lists when not given). */
  permissions: CommandRules;
  /** `fork_context = true`: as a sub-agent it starts from its caller's conversation so far. */
  forkContext: boolean;
  subAgents: string[];
  subAgentsConfig: SubAgentsConfig;
  memory: MemoryConfig;
  params: ModelParams;
  retry: RetryPolicy;
  /**
   * `maxTokens`: the tree-wide token budget (Go's; read from the top-level agent only). The rest
   * are this agent's own limits, wherever it runs in the tree.
   */
  budget: AgentBudget;
  artifacts: ArtifactsConfig;
  mcpServers: McpServerSpec[];
  /** Typed inputs callers pass (`[input.<name>]`), in file order; empty for most agents. */
  inputs: InputSpec[];
  /** `[output]`: the agent ends through `submit_result` / `submit_error`; absent for most agents. */
  output?: OutputSpec;
  /**
   * `submit_result` / `submit_error` offered without `[output]` (a `spawn_agents` worker, a Codex
   * definition): the value is free text, and a plain answer still ends the agent.
   */
  offersSubmit?: boolean;
  /** Claude-style `maxTurns`; undefined = the hard limit (50). */
  maxTurns?: number;
  /** Non-fatal findings from loading (unsupported known fields, …), one line each. */
  warnings: string[];
  /** Decisions worth saying with `--verbose` (the default tools of a Markdown agent), one line each. */
  notes: string[];
}

/** What an agent may use without asking: each tier has the tools of the ones before it. */
export type ToolTier = 'read' | 'write' | 'shell';

/** `[permissions]`: command prefixes `run_command` runs without asking (`allow`) or never (`deny`). */
export interface CommandRules {
  allow: string[];
  deny: string[];
}

export interface ModelRef {
  provider: string;
  model: string;
}

export type InputType = 'string' | 'number' | 'integer' | 'boolean' | 'string[]' | 'number[]';

export interface InputSpec {
  name: string;
  type: InputType;
  required: boolean;
  description: string;
}

export interface OutputSpec {
  /** The value's name in `submit_result`'s parameters (`result` by default). */
  name: string;
  description: string;
  /** JSON Schema of the value; absent: the value is a string. */
  schema?: JsonObject;
}

export interface AgentBudget {
  maxTokens?: number;
  maxToolCalls?: number;
  maxTurns?: number;
  /** Seconds. */
  timeout?: number;
  /** Seconds of one last turn for a sub-agent stopped by its timeout or turn limit. */
  gracePeriod?: number;
}

export interface SubAgentsConfig {
  /** Effective max depth, 1..5 (0 in the file means the default 3). */
  maxDepth: number;
  parallel: boolean;
  /** Seconds per sub-agent call; 0 = share the parent's deadline. */
  timeout: number;
  /** Run-wide concurrency limit when set in the file (env AXE_MAX_PARALLEL, default 64, otherwise). */
  maxParallel?: number;
  /** Defaults for each sub-agent call: tool calls, turns, and tokens of its subtree. */
  childMaxToolCalls?: number;
  childMaxTurns?: number;
  childMaxTokens?: number;
  /** What `call_agent` returns: Go's text contract, or one JSON object per call. */
  resultFormat: 'text' | 'json';
  /** `call_agent` takes per-call `model`, `tools`, `system_prompt`, `read_only`, `max_tool_calls`. */
  overrides: boolean;
  /** A `spawn_agents` tool: tasks run in parallel by copies of this agent. */
  spawn: boolean;
  /** Most tasks in one `spawn_agents` call. */
  maxSpawn: number;
  /** A `delegate_task` tool: a plan of sub-tasks with dependencies. */
  delegate: boolean;
  /** Most sub-tasks in one `delegate_task` plan. */
  maxSubtasks: number;
  /** `call_agent` takes `run_in_background`; `task_output` collects. */
  background: boolean;
  /** The agents it calls get `ask_parent`, answered by its model. */
  askParent: boolean;
  /** Its children with the same prompt prefix send their first request after the first one's answer began. */
  cacheWarmup?: boolean;
  /** `call_agent` takes `resume`: an earlier call's agent_id, whose conversation goes on. */
  resume: boolean;
  /** Most `ask_parent` questions per call. */
  maxQuestions: number;
}

export interface MemoryConfig {
  enabled: boolean;
  path?: string;
  lastN: number;
  maxEntries: number;
}

export interface ModelParams {
  /** Explicit 0 is kept (Go axe cannot send temperature 0). */
  temperature?: number;
  /** Nucleus sampling (`[params] top_p`). */
  topP?: number;
  maxTokens?: number;
  responseFormat?: ResponseFormat;
  thinkingBudget?: number;
  reasoningEffort?: string;
  /** `[params] prompt_caching` as written: true, false, or undefined when the file leaves it out. */
  promptCaching?: boolean;
}

export interface ArtifactsConfig {
  enabled: boolean;
  /** `~` and `$VAR` expanded; relative to the workdir when relative. */
  dir?: string;
  /** `write_file` without an `artifact` argument writes into the artifact directory. */
  defaultWrite: boolean;
}

export type McpServerSpec =
  | {
      name: string;
      transport: 'stdio';
      command: string;
      args: string[];
      /** Values may contain `${VAR}`, expanded when the server starts. */
      env: Record<string, string>;
    }
  | {
      name: string;
      transport: 'sse' | 'streamable-http';
      url: string;
      /** Values may contain `${VAR}`, expanded when the server connects. */
      headers: Record<string, string>;
    };

export const DEFAULT_MAX_DEPTH = 3;
export const DEFAULT_MAX_SPAWN = 16;
export const DEFAULT_MAX_SUBTASKS = 5;
export const DEFAULT_MAX_QUESTIONS = 3;
export const DEFAULT_TIMEOUT_SECONDS = 120;
export const MAX_TURNS = 50;
/**
 * Run-wide concurrent sub-agent calls and tool runs. Go axe has no cap; 64 lets a wide turn (a
 * 32-way fan-out) start at once while a runaway one (hundreds of calls) still queues instead of
 * opening hundreds of connections against a provider's rate limit. A child costs ~0.2 MB.
 */
export const DEFAULT_MAX_PARALLEL = 64;

/** `--system`: the spec with that system prompt in place of its own (as it is without one). */
export function withSystemPrompt(spec: AgentSpec, system: string | undefined): AgentSpec {
  return system === undefined ? spec : { ...spec, systemPrompt: system };
}

/**
 * Whether the agent's skill may be missing (said as a warning, the run goes on without it): Claude
 * Code only warns about a skill its `skills:` names and cannot find, so axe does too for a Markdown
 * agent (Claude Code, Gemini CLI, opencode). A TOML or YAML file's skill, and `--skill`, must be there.
 */
export function skillMayBeMissing(spec: AgentSpec, fromFlag: boolean): boolean {
  return !fromFlag && spec.format === 'markdown';
}
