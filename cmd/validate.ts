import { lintAgents } from '../internal/agent/lint.js';
import { type Finding, formatFinding, problemFinding } from '../internal/agent/load.js';
import { FileProblem } from '../internal/config/file-problem.js';
import { type GlobalConfig, loadGlobalConfig } from '../internal/config/global.js';
import { agentLookup } from '../internal/config/paths.js';
import { ExitCode } from '../internal/errors.js';
import { agentsDirFlags } from './argv.js';
import { stdout } from './stdio.js';

/** `axe validate [agent...]`: lint agent files; exit 0 when clean, 2 with errors (or warnings under --strict). */
export async function validateCommand(names: string[], options: Record<string, unknown>): Promise<number> {
  const { searchDirs, configDir } = agentLookup(agentsDirFlags(options), process.env, process.cwd());
  const configFindings: Finding[] = [];
  let globalConfig: GlobalConfig = { providers: {} };
  try {
    globalConfig = await loadGlobalConfig(configDir);
  } catch (error) {
    if (!(error instanceof FileProblem)) throw error;
    configFindings.push(problemFinding(error));
  }
  // Unknown keys of config.toml, a key in it others may read: warnings, errors under --strict.
  const { source } = globalConfig;
  if (source !== undefined) {
    for (const note of globalConfig.notes ?? [])
      configFindings.push({ file: source, severity: 'warning', ...note });
  }
  const result = await lintAgents({ names, searchDirs, env: process.env, configDir, globalConfig });
  const findings = [...configFindings, ...result.findings];
  const strict = options.strict === true;
  const errors = findings.filter(
    (finding) => finding.severity === 'error' || (strict && finding.severity === 'warning'),
  ).length;
  const warnings = findings.filter((finding) => finding.severity === 'warning').length;
  if (options.json === true) {
    const report = {
      ok: errors === 0,
      checked: result.checked,
      errors,
      warnings,
      findings: findings.map(inOrder),
    };
    stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    for (const finding of findings) stdout.write(`${finding.severity}: ${formatFinding(finding)}\n`);
    const summary = `${result.checked} agent file${result.checked === 1 ? '' : 's'} checked: ${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
    stdout.write(`${summary}\n`);
  }
  return errors > 0 ? ExitCode.config : ExitCode.ok;
}

/** One key order for every finding, as schemas/validate-output.schema.json lists them. */
function inOrder(finding: Finding): Finding {
  const { file, severity, field, message, line, column } = finding;
  return {
    file,
    severity,
    ...(field !== undefined ? { field } : {}),
    message,
    ...(line !== undefined ? { line } : {}),
    ...(column !== undefined ? { column } : {}),
  };
}
