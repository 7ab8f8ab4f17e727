import { access, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, resolve } from 'node:path';
import { suggestion } from '../config/did-you-mean.js';
import type { GlobalConfig } from '../config/global.js';
import { resolveProviderSettings } from '../config/providers.js';
import { ConfigError } from '../errors.js';
import { BUILTIN_TOOL_NAMES, CALL_AGENT_TOOL_NAME } from '../tools/types.js';
import { referencedVariables } from './expand.js';
import {
  AGENT_EXTENSIONS,
  type AgentFileReport,
  agentFiles,
  checkAgentName,
  compareCodeUnits,
  type Finding,
  findAgentFile,
  inspectAgentFile,
} from './load.js';
import type { AgentSpec } from './spec.js';

export interface LintOptions {
  /** Agent names to check; empty = every agent file of the search directories. */
  names: string[];
  searchDirs: string[];
  env: NodeJS.ProcessEnv;
  configDir: string;
  /** Loaded by the caller (a broken config.toml is reported by the caller, not here). */
  globalConfig: GlobalConfig;
}

export interface LintResult {
  /** Agent files checked. */
  checked: number;
  findings: Finding[];
}

/**
 * `axe validate`: everything that can be known about agent files without calling a model —
 * schema, sub-agents resolvable, cycles, chain depth against max_depth, tools, MCP settings,
 * providers, skills.
 */
export async function lintAgents(options: LintOptions): Promise<LintResult> {
  const findings: Finding[] = [];
  const reports = new Map<string, Promise<AgentFileReport | undefined>>();
  const byName = (name: string): Promise<AgentFileReport | undefined> => {
    let report = reports.get(name);
    if (!report) {
      report = findAgentFile(name, options.searchDirs).then((file) =>
        file ? inspectAgentFile(file, options.env) : undefined,
      );
      reports.set(name, report);
    }
    return report;
  };

  const targets: AgentFileReport[] = [];
  const allFiles = await agentFiles(options.searchDirs);
  if (options.names.length === 0) {
    for (const entry of allFiles) {
      for (const shadowed of entry.shadows) {
        findings.push({
          file: shadowed,
          severity: 'warning',
          message: `ignored: agent "${entry.name}" is ${entry.file}`,
        });
      }
      const report = inspectAgentFile(entry.file, options.env);
      reports.set(entry.name, report);
      targets.push(await report);
    }
  } else {
    for (const name of options.names) {
      const asFile = await agentFileArgument(name);
      if (asFile) {
        targets.push(await inspectAgentFile(asFile, options.env));
        continue;
      }
      try {
        checkAgentName(name);
      } catch (error) {
        findings.push({ file: name, severity: 'error', message: (error as ConfigError).message });
        continue;
      }
      const report = await byName(name);
      if (report) targets.push(report);
      else findings.push({ file: name, severity: 'error', message: `agent config not found: ${name}` });
    }
  }
  const knownNames = allFiles.map((entry) => entry.name);

  for (const report of targets) {
    findings.push(...report.findings);
    const spec = report.spec;
    if (!spec) continue;
    const specFindings = [
      ...checkTools(spec),
      ...checkMcpServers(spec, options.env),
      ...checkHosts(spec),
      ...checkModel(spec, options.globalConfig, options.env),
      ...(await checkSkill(spec, options.configDir)),
    ];
    for (const [index, sub] of spec.subAgents.entries()) {
      const subReport = await byName(sub);
      const field = `sub_agents[${index}]`;
      if (!subReport) {
        const hint = suggestion(sub, knownNames);
        specFindings.push({
          file: spec.source,
          severity: 'error',
          field,
          message: `agent config not found: ${sub}${hint}`,
        });
      } else if (!subReport.spec && !targets.includes(subReport)) {
        const error = subReport.findings.find((finding) => finding.severity === 'error');
        specFindings.push({
          file: spec.source,
          severity: 'error',
          field,
          message: `"${sub}" does not load: ${error?.message}`,
        });
      }
    }
    specFindings.push(...(await checkGraph(spec, byName)));
    findings.push(...specFindings.map(report.locate));
  }
  return { checked: targets.length, findings: sortFindings(findings) };
}

function checkTools(spec: AgentSpec): Finding[] {
  const findings: Finding[] = [];
  const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
  const hasMcp = spec.mcpServers.length > 0;
  for (const [index, tool] of spec.tools.entries()) {
    const field = `tools[${index}]`;
    if (tool === CALL_AGENT_TOOL_NAME) {
      findings.push({
        file: spec.source,
        severity: 'error',
        field,
        message: `"${CALL_AGENT_TOOL_NAME}" comes with sub_agents; remove it from tools`,
      });
    } else if (!builtins.includes(tool) && !hasMcp) {
      findings.push({
        file: spec.source,
        severity: 'error',
        field,
        message: `unknown tool "${tool}"${suggestion(tool, builtins)}: built-in tools are ${builtins.join(', ')}; other tools need mcp_servers`,
      });
    }
  }
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

function checkMcpServers(spec: AgentSpec, env: NodeJS.ProcessEnv): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const [index, server] of spec.mcpServers.entries()) {
    if (seen.has(server.name)) {
      findings.push({
        file: spec.source,
        severity: 'error',
        field: `mcp_servers[${index}].name`,
        message: `"${server.name}" is used by another server too`,
      });
    }
    seen.add(server.name);
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

function checkHosts(spec: AgentSpec): Finding[] {
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

function checkModel(spec: AgentSpec, config: GlobalConfig, env: NodeJS.ProcessEnv): Finding[] {
  if (!spec.model) return [];
  try {
    resolveProviderSettings(config, spec.model.provider, env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return [{ file: spec.source, severity: 'error', field: 'model', message: error.message }];
  }
}

async function checkSkill(spec: AgentSpec, configDir: string): Promise<Finding[]> {
  if (spec.skill === undefined) return [];
  const candidates = isAbsolute(spec.skill)
    ? [spec.skill]
    : [join(configDir, spec.skill), join(configDir, 'skills', spec.skill, 'SKILL.md')];
  for (const candidate of candidates) {
    try {
      await access(candidate);
      return [];
    } catch {}
  }
  return [
    {
      file: spec.source,
      severity: 'warning',
      field: 'skill',
      message: `not found (looked for ${candidates.join(', ')}); --skill can give it at run time`,
    },
  ];
}

/**
 * Cycles in the sub-agent graph, and the deepest chain against `max_depth`: with max_depth N the
 * agent at depth N has no `call_agent`, so a chain of more than N calls cannot happen.
 */
async function checkGraph(
  root: AgentSpec,
  byName: (name: string) => Promise<AgentFileReport | undefined>,
): Promise<Finding[]> {
  const children = async (name: string): Promise<string[]> => [
    ...new Set((await byName(name))?.spec?.subAgents ?? []),
  ];
  // Depth-first with the current path on a stack: meeting a name already on it is a cycle.
  const finished = new Map<string, string[]>();
  let cycle: string[] | undefined;
  const longestFrom = async (name: string, path: string[]): Promise<string[]> => {
    const done = finished.get(name);
    if (done) return done;
    let longest = [name];
    for (const child of await children(name)) {
      if (cycle) break;
      if (path.includes(child)) {
        cycle = [...path.slice(path.indexOf(child)), child];
        break;
      }
      const below = await longestFrom(child, [...path, child]);
      if (below.length + 1 > longest.length) longest = [name, ...below];
    }
    finished.set(name, longest);
    return longest;
  };
  const deepest = await longestFrom(root.name, [root.name]);
  if (cycle) {
    return [
      {
        file: root.source,
        severity: 'error',
        field: 'sub_agents',
        message: `cycle in the agent graph: ${cycle.join(' → ')}`,
      },
    ];
  }
  const calls = deepest.length - 1;
  if (calls > root.subAgentsConfig.maxDepth) {
    return [
      {
        file: root.source,
        severity: 'warning',
        field: 'sub_agents_config.max_depth',
        message: `chain ${deepest.join(' → ')} is ${calls} calls deep but max_depth is ${root.subAgentsConfig.maxDepth}: ${deepest[root.subAgentsConfig.maxDepth]} will run without its sub-agents`,
      },
    ];
  }
  return [];
}

function sortFindings(findings: Finding[]): Finding[] {
  return findings
    .map((finding, index) => ({ finding, index }))
    .sort(
      (a, b) =>
        compareCodeUnits(a.finding.file, b.finding.file) ||
        (a.finding.line ?? 0) - (b.finding.line ?? 0) ||
        a.index - b.index,
    )
    .map(({ finding }) => finding);
}

/** `axe validate path/to/agent.toml`: an argument naming an existing agent file is checked as that file. */
async function agentFileArgument(argument: string): Promise<string | undefined> {
  if (!(AGENT_EXTENSIONS as readonly string[]).includes(extname(argument))) return undefined;
  try {
    return (await stat(argument)).isFile() ? resolve(argument) : undefined;
  } catch {
    return undefined;
  }
}
