import { resolve } from 'node:path';
import { suggestion } from '../config/did-you-mean.js';
import type { GlobalConfig } from '../config/global.js';
import { ConfigError } from '../errors.js';
import { fsPromises } from '../fs/promises.js';
import {
  agentFiles,
  checkAgentName,
  compareCodeUnits,
  findAgentFile,
  hasAgentExtension,
} from './agent-files.js';
import { checkHosts, checkMcpServers, checkModel, checkSkill, checkTools } from './lint-checks.js';
import { type AgentFileReport, type Finding, inspectAgentFile } from './load.js';
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
        if (!(error instanceof ConfigError)) throw error;
        findings.push({ file: name, severity: 'error', message: error.message });
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
    const specFindings: Finding[] = [
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
  if (!hasAgentExtension(argument)) return undefined;
  try {
    return (await fsPromises().stat(argument)).isFile() ? resolve(argument) : undefined;
  } catch {
    return undefined;
  }
}
