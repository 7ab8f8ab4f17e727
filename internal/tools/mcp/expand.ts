import { ConfigError } from '../../errors.js';
import { addSecret } from '../../secrets.js';

/**
 * `${VAR}` expansion for MCP header values and stdio env. A variable that is not set is a config
 * error naming it and where it was used (`$$` is not special; only the braced form expands).
 */
function expandVars(value: string, env: NodeJS.ProcessEnv, where: string): string {
  return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const found = env[name];
    if (found === undefined) {
      throw new ConfigError(`${where}: environment variable ${name} is not set (referenced as \${${name}})`);
    }
    return found;
  });
}

/**
 * Expands every value. Every header and env value is taken for a secret, whatever its name: an
 * Authorization header is the common case, but so is `DB_URL = "postgres://admin:…@db"`, which
 * no name rule would catch. `agents show` hides them all; a tool that echoes one (a server that
 * prints its environment) must not show it in `--json`, `--events`, a transcript or a trace.
 */
export function expandRecord(
  record: Record<string, string>,
  env: NodeJS.ProcessEnv,
  where: (key: string) => string,
): Record<string, string> {
  const expanded = Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, expandVars(value, env, where(key))]),
  );
  for (const value of Object.values(expanded)) addSecret(value);
  return expanded;
}
