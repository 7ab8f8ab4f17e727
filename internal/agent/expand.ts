import { homedir } from 'node:os';

/**
 * Expands a leading `~` and every `$VAR` / `${VAR}` from `env`. Returns the names of variables
 * that are not set instead of silently expanding them to nothing.
 */
export function expandPath(text: string, env: NodeJS.ProcessEnv): { value: string; unset: string[] } {
  const unset: string[] = [];
  const home = env.HOME || homedir();
  const withHome = text === '~' ? home : text.startsWith('~/') ? `${home}${text.slice(1)}` : text;
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
