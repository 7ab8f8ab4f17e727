import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { basename, extname, join, resolve } from 'node:path';
import { resolvePaths } from '../config/paths.js';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { checkAgentName, hasAgentExtension } from './agent-files.js';
import { scaffoldAgent } from './scaffold.js';

/**
 * Where `axe agents init` writes a new agent: the first `--agents-dir` given, else `./axe/agents`
 * when it exists, else the config directory's `agents/`.
 */
function newAgentDir(agentsDirs: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  const first = agentsDirs[0];
  if (first !== undefined) return resolve(cwd, first);
  const local = join(cwd, 'axe', 'agents');
  return existsSync(local) ? local : join(resolvePaths(env).configDir, 'agents');
}

/**
 * A new agent file `<dir>/<agent>.toml` from Go axe's template, in the directory newAgentDir
 * picks; refused when an agent of that name is already there in any of the agent file formats.
 * Returns the file.
 */
export async function createAgentFile(
  agent: string,
  where: { agentsDirs: string[]; cwd: string; env: NodeJS.ProcessEnv },
): Promise<string> {
  checkAgentName(agent);
  const dir = newAgentDir(where.agentsDirs, where.cwd, where.env);
  const file = join(dir, `${agent}.toml`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o755 }); // never writable by others, whatever the umask
    const existing = readdirSync(dir).find(
      (name) => basename(name, extname(name)) === agent && hasAgentExtension(name),
    );
    if (existing)
      throw new ConfigError(`agent config already exists: ${join(dir, existing)} (not overwritten)`);
    // Exclusive: of two concurrent inits of one name, the second is told the file exists.
    await writeFileAtomic(file, scaffoldAgent(agent), { exclusive: true });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new ConfigError(`agent config already exists: ${file} (not overwritten)`);
    }
    throw new ConfigError(`agents init: cannot create ${file}: ${fsErrorReason(error)}`);
  }
  return file;
}
