/**
 * Secrets in what axe prints (dry-run, `agents show`, provider hints): URL user info and query
 * values, literal header / env values, the values of secret-looking command flags.
 */

/** A URL may carry a secret in its user info or its query: those are masked, never printed. */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const hasUser = parsed.username !== '' || parsed.password !== '';
  if (!hasUser && parsed.search === '') return url;
  if (hasUser) {
    parsed.username = '***';
    parsed.password = '';
  }
  for (const name of [...new Set(parsed.searchParams.keys())]) parsed.searchParams.set(name, '***');
  return parsed.toString();
}

const MASK = '***';

const ONLY_VARIABLES = /^(?:(?:Bearer|Basic|Token|Bot) +)?(?:\$\{[A-Za-z_][A-Za-z0-9_]*\})+$/i;
const SECRET_FLAG = /^--?[\w-]*(?:token|key|secret|passw(?:or)?d|auth)[\w-]*$/i;

/**
 * A header or env value is shown only when its secret lives in the environment (`Bearer ${TOKEN}`);
 * any literal text beyond an auth scheme may be the secret itself.
 */
export function redactValue(value: string): string {
  return ONLY_VARIABLES.test(value.trim()) ? value : MASK;
}

/** `--api-key sk-…` and `--token=…`: the value of a secret-looking flag is masked. */
export function redactArgs(args: string[]): string[] {
  return args.map((arg, index) => {
    const equals = arg.indexOf('=');
    if (equals > 0 && SECRET_FLAG.test(arg.slice(0, equals))) {
      return `${arg.slice(0, equals)}=${redactValue(arg.slice(equals + 1))}`;
    }
    const previous = args[index - 1];
    return previous !== undefined && SECRET_FLAG.test(previous) && !arg.startsWith('-')
      ? redactValue(arg)
      : arg;
  });
}
