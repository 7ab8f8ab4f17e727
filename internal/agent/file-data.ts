/**
 * An agent file's fields after schema validation (schemas/agent.schema.json), in the snake_case
 * spelling of the TOML format. The schema guarantees this shape; `toSpec` turns it into AgentSpec.
 */
import type { JsonObject } from '../provider/types.js';
import type { InputType } from './spec.js';

export interface AgentFileData {
  name: string;
  description?: string;
  display_name?: string;
  model: string;
  system_prompt?: string;
  query?: string;
  skill?: string;
  files?: string[];
  workdir?: string;
  timeout?: number;
  stream?: boolean;
  tools?: string[];
  disallowed_tools?: string[];
  allowed_hosts?: string[];
  read_only?: boolean;
  fork_context?: boolean;
  sub_agents?: string[];
  max_turns?: number;
  sub_agents_config?: {
    max_depth?: number;
    parallel?: boolean;
    timeout?: number;
    max_parallel?: number;
    max_tool_calls?: number;
    max_turns?: number;
    max_tokens?: number;
    result_format?: 'text' | 'json';
    overrides?: boolean;
    spawn?: boolean;
    max_spawn?: number;
    delegate?: boolean;
    max_subtasks?: number;
    background?: boolean;
    ask_parent?: boolean;
    cache_warmup?: boolean;
    resume?: boolean;
    max_questions?: number;
  };
  memory?: { enabled?: boolean; path?: string; last_n?: number; max_entries?: number };
  params?: {
    temperature?: number;
    top_p?: number;
    max_tokens?: number;
    thinking_budget?: number;
    reasoning_effort?: string;
    prompt_caching?: boolean;
    response_format?:
      | 'text'
      | 'json_object'
      | {
          type: 'text' | 'json_object' | 'json_schema';
          name?: string;
          description?: string;
          strict?: boolean;
          schema?: JsonObject;
        };
  };
  retry?: {
    max_retries?: number;
    backoff?: 'exponential' | 'linear' | 'fixed';
    initial_delay_ms?: number;
    max_delay_ms?: number;
  };
  input?: Record<string, { type: InputType; required?: boolean; description?: string }>;
  output?: { name?: string; description?: string; schema?: JsonObject };
  budget?: {
    max_tokens?: number;
    max_tool_calls?: number;
    max_turns?: number;
    timeout?: number;
    grace_period?: number;
  };
  artifacts?: { enabled?: boolean; dir?: string; default_write?: boolean };
  mcp_servers?: McpServerData[];
}

export interface McpServerData {
  name: string;
  transport?: 'stdio' | 'sse' | 'streamable-http';
  url?: string;
  headers?: Record<string, string>;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
}
