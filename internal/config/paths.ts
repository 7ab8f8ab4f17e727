import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

export interface AxePaths {
  configDir: string;
  dataDir: string;
  cacheDir: string;
}

/**
 * XDG base directories: `$XDG_CONFIG_HOME/axe` (else `~/.config/axe`), `$XDG_DATA_HOME/axe`
 * (else `~/.local/share/axe`), `$XDG_CACHE_HOME/axe` (else `~/.cache/axe`). Relative XDG values
 * are ignored, as the XDG spec says.
 */
export function resolvePaths(env: NodeJS.ProcessEnv): AxePaths {
  const home = env.HOME || homedir();
  const base = (variable: string, fallback: string[]): string => {
    const value = env[variable];
    return join(value && isAbsolute(value) ? value : join(home, ...fallback), 'axe');
  };
  return {
    configDir: base('XDG_CONFIG_HOME', ['.config']),
    dataDir: base('XDG_DATA_HOME', ['.local', 'share']),
    cacheDir: base('XDG_CACHE_HOME', ['.cache']),
  };
}

/** A repeatable directory flag as the CLI parser gives it: absent, once (a string) or repeated (a list). */
/** The agent search directories and the config directory, for the CLI's `--agents-dir` value. */
export function agentLookup(
  flagDirs: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): { searchDirs: string[]; configDir: string } {
  const { configDir } = resolvePaths(env);
  return {
    searchDirs: agentSearchDirs({ flagDirs, cwd, configDir }),
    configDir,
  };
}

/** Agent lookup order: every `--agents-dir` (in the order given) → `./axe/agents` → `<config>/agents`. */
export function agentSearchDirs(options: { flagDirs: string[]; cwd: string; configDir: string }): string[] {
  const dirs = [
    ...options.flagDirs.map((dir) => resolve(options.cwd, dir)),
    join(options.cwd, 'axe', 'agents'),
    join(options.configDir, 'agents'),
  ];
  return [...new Set(dirs)];
}

/**
 * Where a skill lives: an absolute path as is; a bare name (no `/`, no `.md`) is
 * `<config>/skills/<name>/SKILL.md`; anything else is relative to the config dir.
 */
export function skillPath(skill: string, configDir: string): string {
  if (isAbsolute(skill)) return skill;
  const bareName = !skill.includes('/') && !skill.includes('\\') && !skill.toLowerCase().endsWith('.md');
  if (bareName) return join(configDir, 'skills', skill, 'SKILL.md');
  return join(configDir, skill);
}
