import { ConfigError } from '../../errors.js';
import { addSecret, addSecretsFromEnv } from '../../secrets.js';

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
 * Expands every value. Header values are secrets (an Authorization header is the common case);
 * an env value is one when its name says so (`GITHUB_TOKEN`): both are masked in what axe writes.
 */
export function expandRecord(
  record: Record<string, string>,
  env: NodeJS.ProcessEnv,
  where: (key: string) => string,
  kind: 'header' | 'env',
): Record<string, string> {
  const expanded = Object.fromEntries(
    Object.entries(record).map(([key, value]) => [key, expandVars(value, env, where(key))]),
  );
  if (kind === 'header') for (const value of Object.values(expanded)) addSecret(value);
  else addSecretsFromEnv(expanded);
  return expanded;
}
