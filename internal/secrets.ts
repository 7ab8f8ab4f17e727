/**
 * The secret values this process knows — API keys from the environment and config.toml, provider
 * headers, MCP header and env values — so that no echo of one reaches anything axe writes: an
 * error a server sent back with the key in it, `--json`, `--verbose`, a cassette, `agents show`,
 * or a sub-agent's failure as its parent reads it. Values under 8 characters are left alone:
 * masking them would mangle ordinary text, and no real key is that short.
 */
const MASK = '***';
const MIN_SECRET_LENGTH = 8;
/** Environment variables whose values are secrets by their name: `*_API_KEY`, `GH_TOKEN`, … */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)(?:_|$)/i;

const known = new Set<string>();

export function addSecret(value: string | undefined): void {
  if (value !== undefined && value.length >= MIN_SECRET_LENGTH) known.add(value);
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
