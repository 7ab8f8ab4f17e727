/** The checks `axe validate` runs on one loaded agent, each giving findings on its fields. */
import { suggestion } from '../config/did-you-mean.js';
import type { GlobalConfig } from '../config/global.js';
import { skillPath } from '../config/paths.js';
import { resolveProviderSettings } from '../config/providers.js';
import { AxeError } from '../errors.js';
import { fsPromises } from '../fs/promises.js';
import { BUILTIN_TOOL_NAMES } from '../tools/types.js';
import { referencedVariables } from './expand.js';
import type { Finding } from './finding.js';
import { toolNameFindings } from './go-rules.js';
import { agentRequestProblems } from './request-problems.js';
import { type AgentSpec, skillMayBeMissing } from './spec.js';

/** `tools` of a TOML agent is checked when the file loads (go-rules.ts); the rest here. */
export function checkTools(spec: AgentSpec): Finding[] {
  const findings = spec.format === 'toml' ? [] : toolNameFindings(spec);
  const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
  const hasMcp = spec.mcpServers.length > 0;
  for (const [index, tool] of spec.disallowedTools.entries()) {
    if (!builtins.includes(tool) && !hasMcp) {
      findings.push({
        file: spec.source,
        severity: 'warning',
        field: `disallowed_tools[${index}]`,
        message: `unknown tool "${tool}"${suggestion(tool, builtins)}`,
      });
    }
  }
  return findings;
}

export function checkMcpServers(spec: AgentSpec, env: NodeJS.ProcessEnv): Finding[] {
  const findings: Finding[] = [];
  for (const [index, server] of spec.mcpServers.entries()) {
    const values: Record<string, Record<string, string>> = server.transport === 'stdio'
      ? { env: server.env }
      : { headers: server.headers };
    for (const [group, entries] of Object.entries(values)) {
      for (const [key, value] of Object.entries(entries)) {
        for (const variable of referencedVariables(value)) {
          if (!Object.hasOwn(env, variable) || env[variable] === undefined) {
            findings.push({
              file: spec.source,
              severity: 'warning',
              field: `mcp_servers[${index}].${group}.${key}`,
              message: `\${${variable}} is not set`,
            });
          }
        }
      }
    }
  }
  return findings;
}

export function checkHosts(spec: AgentSpec): Finding[] {
  return spec.allowedHosts.flatMap((host, index) =>
    /[/:@\s]/.test(host)
      ? [
          {
            file: spec.source,
            severity: 'warning' as const,
            field: `allowed_hosts[${index}]`,
            message: `"${host}" should be a bare host name (no scheme, port or path)`,
          },
        ]
      : [],
  );
}

export function checkModel(spec: AgentSpec, config: GlobalConfig, env: NodeJS.ProcessEnv): Finding[] {
  if (!spec.model) return [];
  try {
    const { api } = resolveProviderSettings(config, spec.model.provider, env);
    const hasTools =
      spec.tools.length > 0 ||
      spec.mcpServers.length > 0 ||
      spec.subAgents.length > 0 ||
      spec.output !== undefined;
    const problems = agentRequestProblems(api, spec, spec.model.model, hasTools);
    const finding = (severity: 'error' | 'warning', field: string, message: string): Finding => ({
      file: spec.source,
      severity,
      field,
      message,
    });
    return [
      ...problems.warnings.map(({ field, message }) => finding('warning', field, message)),
      ...(problems.error !== undefined ? [finding('error', 'params.response_format', problems.error)] : []),
    ];
  } catch (error) {
    if (!(error instanceof AxeError)) throw error;
    return [{ file: spec.source, severity: 'error', field: 'model', message: error.message }];
  }
}

/** The skill file `axe run` would read (runner/prompt.ts decides where that is). */
export async function checkSkill(spec: AgentSpec, configDir: string): Promise<Finding[]> {
  if (spec.skill === undefined) return [];
  const file = skillPath(spec.skill, configDir);
  try {
    await fsPromises().access(file);
    return [];
  } catch {
    // `axe run` (and --dry-run) refuse the agent as written, as Go axe does: an error here too.
    // A Claude Code file's `skills:` entry is only warned about, as Claude Code does (and axe run).
    if (skillMayBeMissing(spec, false)) {
      return [
        {
          file: spec.source,
          severity: 'warning',
          field: 'skills',
          message: `"${spec.skill}" not found (looked for ${file}); axe run goes on without it`,
        },
      ];
    }
    return [
      {
        file: spec.source,
        severity: 'error',
        field: 'skill',
        message: `not found (looked for ${file}); axe run fails without it (--skill can replace it)`,
      },
    ];
  }
}
