/** Option values as the user typed them (cac turns numeric-looking strings into numbers). */

/**
 * The values of a string option as typed. cac turns numeric-looking values into numbers
 * (`-p 1e3` → 1000, `--agents-dir 007` → 7), so they are read from argv; cac's parse is the
 * fallback for forms this scan does not know (combined short flags).
 */
function rawValues(argv: string[], parsed: unknown, names: string[]): string[] {
  if (parsed === undefined) return [];
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const inline = names.find((name) => name.startsWith('--') && arg.startsWith(`${name}=`));
    if (inline) values.push(arg.slice(inline.length + 1));
    else if (names.includes(arg) && i + 1 < argv.length) values.push(argv[++i] ?? '');
  }
  if (values.length > 0) return values;
  const list: unknown[] = Array.isArray(parsed) ? parsed : [parsed];
  return list.filter((v) => typeof v !== 'boolean').map(String);
}

export function lastValue(argv: string[], parsed: unknown, names: string[]): string | undefined {
  return rawValues(argv, parsed, names).at(-1);
}

/** Every `--agents-dir` given, in order, exactly as typed. */
export function agentsDirFlags(options: Record<string, unknown>): string[] {
  return rawValues(process.argv.slice(2), options.agentsDir, ['--agents-dir']);
}
