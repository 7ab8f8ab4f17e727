import { qualifiedModelName } from '../internal/agent/model.js';
import type { AgentSpec, McpServerSpec } from '../internal/agent/spec.js';
import { loadGlobalConfig } from '../internal/config/global.js';
import { resolveProviderSettings } from '../internal/config/providers.js';
import { ConfigError } from '../internal/errors.js';
import { redactArgs, redactUrl, redactValue } from '../internal/redact.js';

type Line = [key: string, value: string];

/** Every resolved field of an agent, one per line. Secrets (keys, literal header / env values) never appear. */
export async function describeAgent(
  spec: AgentSpec,
  configDir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const lines: Line[] = [
    ['name', spec.name],
    ...(spec.declaredName ? [['declared_name', spec.declaredName] satisfies Line] : []),
    ['file', spec.source],
    ['format', spec.format],
    ['description', spec.description],
    ['model', spec.model ? qualifiedModelName(spec.model) : 'inherit'],
    ['provider', await describeProvider(spec, configDir, env)],
    ['system_prompt', spec.systemPrompt],
    ['skill', spec.skill ?? ''],
    ['files', spec.files.join(', ')],
    ['workdir', spec.workdir ?? '(current directory)'],
    ['timeout', spec.timeout !== undefined ? `${spec.timeout}s` : '(default)'],
    ['stream', String(spec.stream ?? false)],
    ['tools', spec.tools.join(', ')],
    ['disallowed_tools', spec.disallowedTools.join(', ')],
    ['allowed_hosts', spec.allowedHosts.join(', ')],
    ['max_turns', spec.maxTurns !== undefined ? String(spec.maxTurns) : '(default 50)'],
    ['sub_agents', spec.subAgents.join(', ')],
  ];
  if (spec.subAgents.length > 0) {
    const config = spec.subAgentsConfig;
    lines.push([
      'sub_agents_config',
      `max_depth=${config.maxDepth} parallel=${config.parallel} timeout=${config.timeout}${config.maxParallel !== undefined ? ` max_parallel=${config.maxParallel}` : ''}`,
    ]);
  }
  const memory = spec.memory;
  lines.push([
    'memory',
    `enabled=${memory.enabled} last_n=${memory.lastN} max_entries=${memory.maxEntries}${memory.path ? ` path=${memory.path}` : ''}`,
  ]);
  const params = spec.params;
  lines.push([
    'params',
    [
      params.temperature !== undefined ? `temperature=${params.temperature}` : '',
      params.maxTokens !== undefined ? `max_tokens=${params.maxTokens}` : '',
      params.responseFormat ? `response_format=${params.responseFormat.type}` : '',
    ]
      .filter(Boolean)
      .join(' '),
  ]);
  const retry = spec.retry;
  lines.push([
    'retry',
    `max_retries=${retry.maxRetries} backoff=${retry.backoff} initial_delay_ms=${retry.initialDelayMs} max_delay_ms=${retry.maxDelayMs}`,
  ]);
  lines.push(['budget', `max_tokens=${spec.budget.maxTokens ?? 'unlimited'}`]);
  lines.push([
    'artifacts',
    `enabled=${spec.artifacts.enabled}${spec.artifacts.dir ? ` dir=${spec.artifacts.dir}` : ''}`,
  ]);
  lines.push(...spec.mcpServers.map((server): Line => ['mcp_server', describeMcp(server)]));
  lines.push(...spec.warnings.map((warning): Line => ['warning', warning]));
  return lines
    .map(([key, value]) => `${`${key}:`.padEnd(19)}${value === '' ? '(none)' : indentContinuation(value)}\n`)
    .join('');
}

async function describeProvider(spec: AgentSpec, configDir: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (!spec.model) return "(the caller's)";
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
    return `${settings.name} (${settings.api} API at ${redactUrl(settings.baseUrl)}; ${key})`;
  } catch (error) {
    if (error instanceof ConfigError) return `error: ${error.message}`;
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

function indentContinuation(value: string): string {
  return value.replace(/\n/g, `\n${' '.repeat(19)}`);
}
