import { homeDir } from '../config/paths.js';

/**
 * Expands a leading `~` and every `$VAR` / `${VAR}` from `env`. Returns the names of variables
 * that are not set instead of silently expanding them to nothing.
 */
export function expandPath(text: string, env: NodeJS.ProcessEnv): { value: string; unset: string[] } {
  const unset: string[] = [];
  let withHome = text;
  if (text === '~' || text.startsWith('~/')) {
    const home = homeDir(env);
    if (home === undefined) unset.push('HOME');
    else withHome = home + text.slice(1);
  }
  const value = withHome.replace(
    /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_, braced, bare) => {
      const name = String(braced ?? bare);
      const found = Object.hasOwn(env, name) ? env[name] : undefined;
      if (found === undefined) unset.push(name);
      return found ?? '';
    },
  );
  return { value, unset };
}

/** Names of the `${VAR}` references in a header or env value. */
export function referencedVariables(text: string): string[] {
  return [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((match) => match[1]!);
}
