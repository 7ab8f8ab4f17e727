/** Headers Node keeps the first of when a response repeats them (as `IncomingMessage.headers` does). */
const FIRST_WINS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * The response's headers, names lowercased, as Node's `IncomingMessage.headers` reads them (a
 * repeated header joined with `, `, `cookie` with `; `, the first kept of FIRST_WINS).
 */
export function headersOf(raw: readonly string[]): Record<string, string> {
  // No prototype: a header named `__proto__` is a header like any other.
  const out: Record<string, string> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (!FIRST_WINS.has(name)) out[name] = `${seen}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return out;
}
