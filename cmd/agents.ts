import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { checkAgentName, hasAgentExtension, locateAgent } from '../internal/agent/agent-files.js';
import { builtinAgentsDir } from '../internal/agent/builtin.js';
import { listAgents, loadAgentFileData } from '../internal/agent/load.js';
import { agentLookup, resolvePaths } from '../internal/config/paths.js';
import { ConfigError, RuntimeError } from '../internal/errors.js';
import { fsErrorReason } from '../internal/fs/fs-error.js';
import { writeFileAtomic } from '../internal/fs/write-atomic.js';
import { maskSecrets } from '../internal/secrets.js';
import { oneLine } from '../internal/text.js';
import { agentsDirFlags } from './argv.js';
import { stderr, stdout } from './stdio.js';

/** `axe agents list | show <agent> | init <agent> | edit <agent>`. */
export async function agentsCommand(
  action: string,
  agent: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  if (action === 'list') return list(options);
  if (!['show', 'init', 'edit'].includes(action)) {
    throw new ConfigError(`unknown agents action "${action}": expected list, show, init or edit`);
  }
  if (agent === undefined)
    throw new ConfigError(`missing <agent> for "agents ${action}" (e.g. axe agents ${action} reviewer)`);
  if (action === 'show') return show(agent, options);
  if (action === 'init') {
    checkAgentName(agent);
    return init(agent, options);
  }
  return edit(agent, options);
}

async function list(options: Record<string, unknown>): Promise<number> {
  const { searchDirs } = agentLookup(agentsDirFlags(options), process.env, process.cwd());
  // `--all`: axe's built-in agents too, after the user's, marked.
  const builtin = builtinAgentsDir();
  const dirs = options.all === true ? [...searchDirs, builtin] : searchDirs;
  const { agents, problems } = await listAgents(dirs, process.env);
  for (const problem of problems) stderr.write(`Warning: skipped ${problem.message}\n`);
  // listAgents returns them sorted by name.
  const lines = agents.map((spec) => {
    const line = spec.description ? `${spec.name} - ${oneLine(spec.description)}` : spec.name;
    return dirname(spec.source) === builtin ? `${line} (built-in)` : line;
  });
  stdout.write(lines.length > 0 ? `${lines.join('\n')}\n` : '');
  return 0;
}

/** Go axe's label lines; `--json`: every resolved field, where the key comes from, warnings. */
async function show(agent: string, options: Record<string, unknown>): Promise<number> {
  const { searchDirs, configDir } = agentLookup(agentsDirFlags(options), process.env, process.cwd());
  const file = await locateAgent(agent, searchDirs, process.cwd());
  const { spec, data } = await loadAgentFileData(file, process.env);
  const { describeAgent, goAgentLines } = await import('./agents-show.js');
  const text =
    options.json === true
      ? `${JSON.stringify(await describeAgent(spec, configDir, process.env))}\n`
      : goAgentLines(data);
  // A key can reach any field through $VAR expansion (`workdir = "/tmp/$API_KEY"`).
  stdout.write(maskSecrets(text));
  return 0;
}

async function init(agent: string, options: Record<string, unknown>): Promise<number> {
  const local = join(process.cwd(), 'axe', 'agents');
  const first = agentsDirFlags(options)[0];
  const dir =
    first !== undefined
      ? resolve(first)
      : existsSync(local)
        ? local
        : join(resolvePaths(process.env).configDir, 'agents');
  const file = join(dir, `${agent}.toml`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 }); // never writable by others, whatever the umask
    const existing = readdirSync(dir).find(
      (name) => basename(name, extname(name)) === agent && hasAgentExtension(name),
    );
    if (existing)
      throw new ConfigError(`agent config already exists: ${join(dir, existing)} (not overwritten)`);
    const { scaffoldAgent } = await import('../internal/agent/scaffold.js');
    // Exclusive: of two concurrent inits of one name, the second is told the file exists.
    await writeFileAtomic(file, scaffoldAgent(agent), { exclusive: true });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ConfigError(`agent config already exists: ${file} (not overwritten)`);
    }
    throw new ConfigError(`agents init: cannot create ${file}: ${fsErrorReason(error)}`);
  }
  stdout.write(`${file}\n`);
  return 0;
}

async function edit(agent: string, options: Record<string, unknown>): Promise<number> {
  const { searchDirs } = agentLookup(agentsDirFlags(options), process.env, process.cwd());
  const file = await locateAgent(agent, searchDirs, process.cwd());
  if (dirname(file) === builtinAgentsDir()) {
    throw new ConfigError(
      `agent "${agent}" is built into axe: to change it, write your own ${agent} file in an agents directory (yours wins)`,
    );
  }
  const editor = process.env.VISUAL || process.env.EDITOR;
  if (!editor) throw new ConfigError('$EDITOR is not set: set it (e.g. export EDITOR=vi) to edit agents');
  // Through the shell, so EDITOR may carry arguments (`code --wait`); the file is passed as $1.
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'axe-edit', file], { stdio: 'inherit' });
  if (result.error) throw new RuntimeError(`cannot run $EDITOR (${editor}): ${result.error.message}`);
  if (result.status !== 0)
    throw new RuntimeError(`$EDITOR (${editor}) exited with status ${result.status ?? result.signal}`);
  return 0;
}
