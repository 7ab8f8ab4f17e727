import { userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

export interface AxePaths {
  configDir: string;
  dataDir: string;
  cacheDir: string;
}

/**
 * XDG base directories: `$XDG_CONFIG_HOME/axe` (else `~/.config/axe`), `$XDG_DATA_HOME/axe`
 * (else `~/.local/share/axe`), `$XDG_CACHE_HOME/axe` (else `~/.cache/axe`). Relative XDG values
 * are ignored, as the XDG spec says. Each is worked out when first asked for, so a machine with
 * no home directory (a container user without a passwd entry) works as long as the directories
 * it needs are set; one that is needed and cannot be found is a config error naming the variable.
 */
export function resolvePaths(env: NodeJS.ProcessEnv): AxePaths {
  return {
    get configDir() {
      return xdgDir(env, 'XDG_CONFIG_HOME', ['.config']);
    },
    get dataDir() {
      return xdgDir(env, 'XDG_DATA_HOME', ['.local', 'share']);
    },
    get cacheDir() {
      return xdgDir(env, 'XDG_CACHE_HOME', ['.cache']);
    },
  };
}

function xdgDir(env: NodeJS.ProcessEnv, variable: string, fallback: string[]): string {
  const value = env[variable];
  if (value && isAbsolute(value)) return join(value, 'axe');
  const home = homeDir(env);
  if (home === undefined) {
    throw new ConfigError(
      `cannot find axe's directories: there is no home directory; set ${variable} (or HOME) to an absolute path`,
    );
  }
  return join(home, ...fallback, 'axe');
}

/** `$HOME` when it is an absolute path, else the user's passwd entry; undefined when neither exists. */
export function homeDir(env: NodeJS.ProcessEnv): string | undefined {
  if (env.HOME && isAbsolute(env.HOME)) return env.HOME;
  try {
    const home = userInfo().homedir;
    return home && isAbsolute(home) ? home : undefined;
  } catch {
    return undefined;
  }
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

/**
 * Agent lookup order: every `--agents-dir` (in the order given) → `./axe/agents` → the project's
 * Claude Code, Gemini CLI and opencode agents → `<config>/agents`.
 */
export function agentSearchDirs(options: { flagDirs: string[]; cwd: string; configDir: string }): string[] {
  const { cwd } = options;
  const dirs = [
    ...options.flagDirs.map((dir) => resolve(cwd, dir)),
    join(cwd, 'axe', 'agents'),
    join(cwd, '.claude', 'agents'),
    join(cwd, '.gemini', 'agents'),
    join(cwd, '.opencode', 'agent'),
    join(cwd, '.opencode', 'agents'),
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
