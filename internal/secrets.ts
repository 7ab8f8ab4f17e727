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
/**
 * `known`, longest first (sorted once after secrets were added, not on every mask): a secret that
 * begins a longer one (`sk-ant-api03` and `sk-ant-api03-…`) must not be masked first, or the
 * longer's rest would show. Undefined until the next mask after an addition.
 */
let longestFirst: string[] | undefined = [];
/** An environment whose secrets are taken when something is first masked (`addSecretsFromEnvLater`). */
let pendingEnv: NodeJS.ProcessEnv | undefined;

/** `longestFirst`, once the pending environment's secrets are in. */
function secrets(): readonly string[] {
  if (pendingEnv !== undefined) {
    const env = pendingEnv;
    pendingEnv = undefined;
    addSecretsFromEnv(env);
  }
  // Stable: secrets of one length keep the order they came in.
  longestFirst ??= [...known].sort((a, b) => b.length - a.length);
  return longestFirst;
}

function remember(value: string): void {
  if (known.has(value)) return;
  known.add(value);
  longestFirst = undefined;
}

export function addSecret(value: string | undefined): void {
  if (value === undefined || value.length < MIN_SECRET_LENGTH) return;
  remember(value);
  // As it stands inside a JSON string (a record, a cassette, --events are masked once encoded): a
  // key with a line break (PEM), a quote or a backslash is escaped there.
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) remember(escaped);
  // A PEM key's lines, each on its own: a tool that shows a file numbers its lines. Not its
  // `-----BEGIN …-----` lines, which say only what kind of key it is.
  if (!value.includes('\n')) return;
  for (const line of value.split(/\r?\n/)) {
    if (!PEM_ARMOR.test(line)) addSecret(line.trim());
  }
}

/**
 * Every value of a secret-named variable (`ANTHROPIC_API_KEY`, `GH_TOKEN`, …). Only those values are
 * read: each of `process.env`'s is fetched from the C library's environment as it is read.
 */
function addSecretsFromEnv(env: NodeJS.ProcessEnv): void {
  for (const name of Object.keys(env)) if (SECRET_NAME.test(name)) addSecret(env[name]);
}

/**
 * `addSecretsFromEnv`, when something is first masked: reading every variable costs start-up time
 * that a command which masks nothing (`agents list`) need not pay.
 */
export function addSecretsFromEnvLater(env: NodeJS.ProcessEnv): void {
  pendingEnv = env;
}

/** `text` with every known secret replaced by `***`. */
export function maskSecrets(text: string): string {
  let masked = text;
  for (const secret of secrets()) if (masked.includes(secret)) masked = masked.split(secret).join(MASK);
  return masked;
}

/**
 * Streamed text (a model's answer as it arrives, delta by delta), masked as it goes: a secret split
 * across deltas is masked whole. `push` gives back at once, masked, all the text that cannot be the
 * start of a secret; the tail that could be (as much of it as begins some secret, so less than the
 * longest secret) is held until more text shows what it is, or until `flush` at the stream's end.
 */
export class SecretHoldback {
  private held = '';

  /** The text that can be written now, masked ('' when all of it is held). */
  push(text: string): string {
    const pending = this.held + text;
    const cut = safeCut(pending);
    this.held = pending.slice(cut);
    return cut === 0 ? '' : maskSecrets(pending.slice(0, cut));
  }

  /** The held text, masked: the stream ended, or something else is about to be written after it. */
  flush(): string {
    const rest = this.held;
    this.held = '';
    return rest === '' ? '' : maskSecrets(rest);
  }
}

/**
 * Where `text` can be cut so that its head, masked on its own, is masked as it would be with what
 * follows: before the earliest tail that is the start of a secret (but not all of it), and before
 * any secret whole in `text` that the cut would split (two secrets that overlap in the text).
 */
function safeCut(text: string): number {
  let cut = text.length;
  for (const secret of secrets()) {
    const first = secret.charAt(0);
    // Only a tail shorter than the secret can be its start.
    let at = text.indexOf(first, Math.max(0, text.length - secret.length + 1));
    while (at !== -1 && at < cut) {
      if (secret.startsWith(text.slice(at))) {
        cut = at;
        break;
      }
      at = text.indexOf(first, at + 1);
    }
  }
  for (let moved = true; moved; ) {
    moved = false;
    for (const secret of secrets()) {
      const at = text.indexOf(secret, Math.max(0, cut - secret.length + 1));
      if (at !== -1 && at < cut) {
        cut = at;
        moved = true;
      }
    }
  }
  return cut;
}
