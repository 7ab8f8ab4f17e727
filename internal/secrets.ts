/**
 * The secret values this process knows — API keys from the environment and config.toml, provider
 * headers, MCP header and env values — so that no echo of one reaches anything axe writes: an
 * error a server sent back with the key in it, `--json`, `--verbose`, a cassette, `agents show`,
 * or a sub-agent's failure as its parent reads it. Values under 8 characters are left alone:
 * masking them would mangle ordinary text, and no real key is that short.
 */
const MASK = '***';
const MIN_SECRET_LENGTH = 8;
/** A PEM key's first and last lines: `-----BEGIN PRIVATE KEY-----`. */
const PEM_ARMOR = /^-----(?:BEGIN|END) [^-]+-----$/;
/** Environment variables whose values are secrets by their name: `*_API_KEY`, `GH_TOKEN`, … */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)(?:_|$)/i;

const known = new Set<string>();

export function addSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
  known.add(value);
  // As it stands inside a JSON string (a record, a cassette, --events are masked once encoded): a
  // key with a line break (PEM), a quote or a backslash is escaped there.
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) known.add(escaped);
  // A PEM key's lines, each on its own: a tool that shows a file numbers its lines. Not its
  // `-----BEGIN …-----` lines, which say only what kind of key it is.
  if (!value.includes('\n')) return;
  for (const line of value.split(/\r?\n/)) {
    if (!PEM_ARMOR.test(line)) addSecret(line.trim());
  }
}

/** Every value of a secret-named variable (`ANTHROPIC_API_KEY`, `GH_TOKEN`, …). */
export function addSecretsFromEnv(env: NodeJS.ProcessEnv): void {
  for (const [name, value] of Object.entries(env)) if (SECRET_NAME.test(name)) addSecret(value);
}

/** `text` with every known secret replaced by `***`. */
export function maskSecrets(text: string): string {
  let masked = text;
  for (const secret of known) if (masked.includes(secret)) masked = masked.split(secret).join(MASK);
  return masked;
}
