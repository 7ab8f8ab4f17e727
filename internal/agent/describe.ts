import { loadGlobalConfig } from '../config/global.js';
import { resolveProviderSettings } from '../config/providers.js';
import { AxeError } from '../errors.js';
import { redactArgs, redactUrl, redactValue } from '../redact.js';
import type { AgentFileData } from './file-data.js';
import { describeInput } from './inputs.js';
import { qualifiedModelName } from './model.js';
import type { AgentSpec, McpServerSpec } from './spec.js';

/** Go axe's `agents show`: `%-16s` labels in Go's order, fields the file leaves empty omitted. */
export function goAgentLines(data: AgentFileData): string {
  const lines: [label: string, value: string | number | boolean | undefined][] = [
    ['Name:', data.name],
    ['Description:', data.description || undefined],
    ['Model:', data.model],
    ['System Prompt:', data.system_prompt || undefined],
    ['Skill:', data.skill || undefined],
    ['Files:', data.files?.length ? data.files.join(', ') : undefined],
    ['Workdir:', data.workdir || undefined],
    ['Timeout:', data.timeout || undefined],
    ['Tools:', data.tools?.length ? data.tools.join(', ') : undefined],
  ];
  if (data.sub_agents?.length) {
    const config = data.sub_agents_config ?? {};
    lines.push(
      ['Sub-Agents:', data.sub_agents.join(', ')],
      ['Max Depth:', config.max_depth ?? 0],
      ['Parallel:', config.parallel ?? true],
      ['Sub-Agent Timeout:', config.timeout ?? 0],
    );
  }
  const memory = data.memory ?? {};
  lines.push(
    ['Memory Enabled:', memory.enabled || undefined],
    ['Memory Path:', memory.path || undefined],
    ['Memory LastN:', memory.last_n || undefined],
    ['Memory MaxEntries:', memory.max_entries || undefined],
    ['Temperature:', data.params?.temperature || undefined],
    ['Max Tokens:', data.params?.max_tokens || undefined],
    // axe's typed inputs, after Go's fields.
    ...Object.entries(data.input ?? {}).map(([name, input]): [string, string] => [
      'Input:',
      describeInput({
        name,
        type: input.type,
        required: input.required ?? false,
        description: input.description ?? '',
      }),
    ]),
    [
      'Output:',
      data.output
        ? `submit_result(${data.output.name ?? 'result'})${data.output.schema ? ' with a schema' : ''}`
        : undefined,
    ],
  );
  return lines
    .filter(([, value]) => value !== undefined)
    .map(([label, value]) => `${label.padEnd(16)}${value}\n`)
    .join('');
}

/** Every resolved field of an agent (`agents show --json`). Secrets (keys, literal header / env values) never appear. */
export async function describeAgent(
  spec: AgentSpec,
  configDir: string,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>> {
  const { subAgentsConfig, memory, params, retry } = spec;
  const provider = await describeProvider(spec, configDir, env);
  return {
    name: spec.name,
    ...(spec.declaredName ? { declared_name: spec.declaredName } : {}),
    file: spec.source,
    format: spec.format,
    ...(spec.dialect ? { dialect: spec.dialect } : {}),
    description: spec.description,
    ...(spec.displayName !== undefined ? { display_name: spec.displayName } : {}),
    model: spec.model ? qualifiedModelName(spec.model) : 'inherit',
    // null when it cannot be resolved; why is in `errors`, never in the field itself.
    provider: 'error' in provider ? null : provider.text,
    system_prompt: spec.systemPrompt,
    ...(spec.query !== undefined ? { query: spec.query } : {}),
    skill: spec.skill ?? null,
    files: spec.files,
    workdir: spec.workdir ?? null,
    timeout: spec.timeout ?? null,
    stream: spec.stream ?? false,
    tools: spec.tools,
    disallowed_tools: spec.disallowedTools,
    allowed_hosts: spec.allowedHosts,
    read_only: spec.readOnly,
    fork_context: spec.forkContext,
    tier: spec.tier ?? null,
    permissions: spec.permissions,
    max_turns: spec.maxTurns ?? null,
    sub_agents: spec.subAgents,
    sub_agents_config: {
      max_depth: subAgentsConfig.maxDepth,
      parallel: subAgentsConfig.parallel,
      timeout: subAgentsConfig.timeout,
      max_parallel: subAgentsConfig.maxParallel ?? null,
      max_tool_calls: subAgentsConfig.childMaxToolCalls ?? null,
      max_turns: subAgentsConfig.childMaxTurns ?? null,
      max_tokens: subAgentsConfig.childMaxTokens ?? null,
      result_format: subAgentsConfig.resultFormat,
      overrides: subAgentsConfig.overrides,
      spawn: subAgentsConfig.spawn,
      max_spawn: subAgentsConfig.maxSpawn,
      delegate: subAgentsConfig.delegate,
      max_subtasks: subAgentsConfig.maxSubtasks,
      background: subAgentsConfig.background,
      ask_parent: subAgentsConfig.askParent,
      max_questions: subAgentsConfig.maxQuestions,
    },
    input: Object.fromEntries(
      spec.inputs.map(({ name, type, required, description }) => [name, { type, required, description }]),
    ),
    output: spec.output ?? null,
    // A worker's or a Codex definition's free-text submit_result, when it has no [output].
    ...(spec.offersSubmit && !spec.output ? { offers_submit: true } : {}),
    memory: {
      enabled: memory.enabled,
      path: memory.path ?? null,
      last_n: memory.lastN,
      max_entries: memory.maxEntries,
    },
    params: {
      temperature: params.temperature ?? null,
      ...(params.topP !== undefined ? { top_p: params.topP } : {}),
      ...(params.thinkingBudget !== undefined ? { thinking_budget: params.thinkingBudget } : {}),
      max_tokens: params.maxTokens ?? null,
      response_format: params.responseFormat?.type ?? null,
    },
    retry: {
      max_retries: retry.maxRetries,
      backoff: retry.backoff,
      initial_delay_ms: retry.initialDelayMs,
      max_delay_ms: retry.maxDelayMs,
    },
    budget: {
      max_tokens: spec.budget.maxTokens ?? null,
      max_tool_calls: spec.budget.maxToolCalls ?? null,
      max_turns: spec.budget.maxTurns ?? null,
      timeout: spec.budget.timeout ?? null,
      grace_period: spec.budget.gracePeriod ?? 0,
    },
    artifacts: {
      enabled: spec.artifacts.enabled,
      dir: spec.artifacts.dir ?? null,
      default_write: spec.artifacts.defaultWrite,
    },
    mcp_servers: spec.mcpServers.map(describeMcp),
    warnings: spec.warnings,
    errors: 'error' in provider ? [provider.error] : [],
  };
}

async function describeProvider(
  spec: AgentSpec,
  configDir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ text: string } | { error: string }> {
  if (!spec.model) return { text: "(the caller's)" };
  try {
    const config = await loadGlobalConfig(configDir);
    const settings = resolveProviderSettings(config, spec.model.provider, env);
    const key = !settings.apiKey
      ? settings.apiKeyRequired
        ? `key NOT set: set ${settings.apiKeyEnv}`
        : `no key needed (${settings.apiKeyEnv} is used when set)`
      : settings.apiKeySource === 'env'
        ? `key from ${settings.apiKeyEnv}`
        : `key from ${config.source ?? 'config.toml'} (providers.${spec.model.provider}.api_key; ${settings.apiKeyEnv} would win)`;
    return { text: `${settings.name} (${settings.api} API at ${redactUrl(settings.baseUrl)}; ${key})` };
  } catch (error) {
    if (error instanceof AxeError) return { error: error.message };
    throw error;
  }
}

function describeMcp(server: McpServerSpec): string {
  if (server.transport === 'stdio') {
    const envText = Object.entries(server.env).map(([key, value]) => `${key}=${redactValue(value)}`);
    return [
      server.name,
      'stdio',
      server.command,
      ...redactArgs(server.args),
      ...(envText.length ? ['env', ...envText] : []),
    ].join(' ');
  }
  const headers = Object.entries(server.headers).map(([key, value]) => `${key}: ${redactValue(value)}`);
  return [
    server.name,
    server.transport,
    redactUrl(server.url),
    ...(headers.length ? [`headers ${headers.join('; ')}`] : []),
  ].join(' ');
}
