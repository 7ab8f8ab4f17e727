import { FileProblem } from '../config/file-problem.js';
import { ConfigError } from '../errors.js';
import { DEFAULT_RETRY, type JsonObject, type ResponseFormat } from '../provider/types.js';
import { expandPath } from './expand.js';
import type { AgentFileData, McpServerData } from './file-data.js';
import { parseModelRef } from './model.js';
import {
  type AgentSpec,
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_QUESTIONS,
  DEFAULT_MAX_SPAWN,
  DEFAULT_MAX_SUBTASKS,
  type McpServerSpec,
} from './spec.js';

export interface SpecSource {
  file: string;
  name: string;
  format: AgentSpec['format'];
  env: NodeJS.ProcessEnv;
  warnings: string[];
  notes?: string[];
  /** A Codex definition: it is offered `submit_result` / `submit_error` and substitutes `${cwd}`. */
  dialect?: 'codex';
}

/** Validated file fields → AgentSpec, with every default applied (Go axe's defaults). */
export function toSpec(data: AgentFileData, source: SpecSource): AgentSpec {
  const expand = (text: string | undefined, field: string): string | undefined => {
    if (text === undefined) return undefined;
    const { value, unset } = expandPath(text, source.env);
    if (unset.length > 0) {
      throw new FileProblem(source.file, `$${unset[0]} is not set (in ${JSON.stringify(text)})`, { field });
    }
    return value;
  };
  let model: AgentSpec['model'];
  try {
    model = parseModelRef(data.model);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new FileProblem(source.file, error.message, { field: 'model' });
  }
  const subAgents = data.sub_agents_config ?? {};
  const memory = data.memory ?? {};
  const retry = data.retry ?? {};
  // Go axe's rule, checked only when both are given (a schema cannot compare two fields).
  if (retry.initial_delay_ms && retry.max_delay_ms && retry.max_delay_ms < retry.initial_delay_ms) {
    throw new FileProblem(
      source.file,
      `must be >= retry.initial_delay_ms (${retry.initial_delay_ms}) (got ${retry.max_delay_ms}); retry.max_delay_ms must be >= retry.initial_delay_ms`,
      { field: 'retry.max_delay_ms' },
    );
  }
  return {
    name: source.name,
    ...(data.name !== source.name ? { declaredName: data.name } : {}),
    description: data.description ?? '',
    ...(given(data.display_name) ? { displayName: data.display_name } : {}),
    source: source.file,
    format: source.format,
    ...(model ? { model } : {}),
    systemPrompt: data.system_prompt ?? '',
    ...(given(data.query) ? { query: data.query } : {}),
    ...(source.dialect ? { dialect: source.dialect, offersSubmit: true } : {}),
    ...(given(data.skill) ? { skill: data.skill } : {}),
    files: data.files ?? [],
    ...(given(data.workdir) ? { workdir: expand(data.workdir, 'workdir') } : {}),
    ...(data.timeout ? { timeout: data.timeout } : {}),
    ...(data.stream !== undefined ? { stream: data.stream } : {}),
    tools: data.tools ?? [],
    disallowedTools: data.disallowed_tools ?? [],
    allowedHosts: data.allowed_hosts ?? [],
    readOnly: data.read_only ?? false,
    forkContext: data.fork_context ?? false,
    subAgents: data.sub_agents ?? [],
    subAgentsConfig: {
      maxDepth: subAgents.max_depth || DEFAULT_MAX_DEPTH,
      parallel: subAgents.parallel ?? true,
      timeout: subAgents.timeout ?? 0,
      ...(subAgents.max_parallel !== undefined ? { maxParallel: subAgents.max_parallel } : {}),
      ...(subAgents.max_tool_calls !== undefined ? { childMaxToolCalls: subAgents.max_tool_calls } : {}),
      ...(subAgents.max_turns !== undefined ? { childMaxTurns: subAgents.max_turns } : {}),
      ...(subAgents.max_tokens ? { childMaxTokens: subAgents.max_tokens } : {}),
      resultFormat: subAgents.result_format ?? 'text',
      overrides: subAgents.overrides ?? false,
      spawn: subAgents.spawn ?? false,
      maxSpawn: subAgents.max_spawn ?? DEFAULT_MAX_SPAWN,
      delegate: subAgents.delegate ?? false,
      maxSubtasks: subAgents.max_subtasks ?? DEFAULT_MAX_SUBTASKS,
      background: subAgents.background ?? false,
      askParent: subAgents.ask_parent ?? false,
      ...(subAgents.cache_warmup ? { cacheWarmup: true } : {}),
      resume: subAgents.resume ?? false,
      maxQuestions: subAgents.max_questions ?? DEFAULT_MAX_QUESTIONS,
    },
    memory: {
      enabled: memory.enabled ?? false,
      ...(given(memory.path) ? { path: expand(memory.path, 'memory.path') } : {}),
      lastN: memory.last_n ?? 10,
      maxEntries: memory.max_entries ?? 100,
    },
    params: {
      ...(data.params?.temperature !== undefined ? { temperature: data.params.temperature } : {}),
      ...(data.params?.top_p !== undefined ? { topP: data.params.top_p } : {}),
      // Go axe's 0 is its "unset": nothing is sent.
      ...(data.params?.max_tokens ? { maxTokens: data.params.max_tokens } : {}),
      ...(data.params?.thinking_budget !== undefined ? { thinkingBudget: data.params.thinking_budget } : {}),
      ...(data.params?.reasoning_effort !== undefined
        ? { reasoningEffort: data.params.reasoning_effort }
        : {}),
      ...(data.params?.prompt_caching !== undefined ? { promptCaching: data.params.prompt_caching } : {}),
      ...(data.params?.response_format !== undefined
        ? { responseFormat: toResponseFormat(data.params.response_format, source.name) }
        : {}),
    },
    retry: {
      maxRetries: retry.max_retries ?? DEFAULT_RETRY.maxRetries,
      backoff: retry.backoff ?? DEFAULT_RETRY.backoff,
      initialDelayMs: retry.initial_delay_ms ?? DEFAULT_RETRY.initialDelayMs,
      maxDelayMs: retry.max_delay_ms ?? DEFAULT_RETRY.maxDelayMs,
    },
    inputs: Object.entries(data.input ?? {}).map(([name, input]) => ({
      name,
      type: input.type,
      required: input.required ?? false,
      description: input.description ?? '',
    })),
    ...(data.output !== undefined
      ? {
          output: {
            name: data.output.name ?? 'result',
            description: data.output.description ?? '',
            ...(data.output.schema !== undefined ? { schema: data.output.schema } : {}),
          },
        }
      : {}),
    budget: {
      ...(data.budget?.max_tokens ? { maxTokens: data.budget.max_tokens } : {}),
      ...(data.budget?.max_tool_calls !== undefined ? { maxToolCalls: data.budget.max_tool_calls } : {}),
      ...(data.budget?.max_turns !== undefined ? { maxTurns: data.budget.max_turns } : {}),
      ...(data.budget?.timeout !== undefined ? { timeout: data.budget.timeout } : {}),
      ...(data.budget?.grace_period ? { gracePeriod: data.budget.grace_period } : {}),
    },
    artifacts: {
      enabled: data.artifacts?.enabled ?? false,
      ...(given(data.artifacts?.dir) ? { dir: expand(data.artifacts.dir, 'artifacts.dir') } : {}),
      defaultWrite: data.artifacts?.default_write ?? false,
    },
    mcpServers: (data.mcp_servers ?? []).map(toMcpServer),
    ...(data.max_turns !== undefined ? { maxTurns: data.max_turns } : {}),
    warnings: source.warnings,
    notes: source.notes ?? [],
  };
}

/** Go axe reads an empty string as "not set" (its scaffold writes `skill = ""`, `workdir = ""`). */
function given(text: string | undefined): text is string {
  return text !== undefined && text !== '';
}

function toMcpServer(server: McpServerData): McpServerSpec {
  const transport = server.transport ?? (server.command !== undefined ? 'stdio' : 'streamable-http');
  if (transport === 'stdio') {
    return {
      name: server.name,
      transport,
      command: server.command ?? '',
      args: server.args ?? [],
      env: server.env ?? {},
    };
  }
  return { name: server.name, transport, url: server.url ?? '', headers: server.headers ?? {} };
}

/**
 * `"json_object"` or a table. Go axe files put the schema's name inside the schema table
 * (`[params.response_format.schema] name = "…"`); it is taken out as the format's name.
 */
function toResponseFormat(
  format: NonNullable<NonNullable<AgentFileData['params']>['response_format']>,
  agent: string,
): ResponseFormat {
  if (typeof format === 'string') return { type: format };
  if (format.type !== 'json_schema') return { type: format.type };
  const { name: nameInSchema, ...schema }: JsonObject = format.schema ?? {};
  const name =
    format.name ?? (typeof nameInSchema === 'string' ? nameInSchema : undefined) ?? safeName(agent);
  const cleaned =
    typeof nameInSchema === 'string' && format.name === undefined ? schema : (format.schema ?? {});
  return {
    type: 'json_schema',
    name,
    schema: cleaned,
    ...(format.strict !== undefined ? { strict: format.strict } : {}),
    ...(format.description !== undefined ? { description: format.description } : {}),
  };
}

function safeName(agent: string): string {
  return agent.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) || 'response';
}
