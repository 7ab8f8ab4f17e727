/**
 * What a provider's response says about its rate limits, read from its headers: a wait it asks
 * for (`retry-after-ms`, `retry-after` in seconds or as an HTTP date) and the requests and tokens
 * left until a reset (Anthropic's `anthropic-ratelimit-*`, OpenAI's and most others'
 * `x-ratelimit-*`). Each figure is undefined when the server did not send it.
 */
export interface RateHeaders {
  retryAfterMs?: number;
  requests?: { remaining: number; resetMs: number | undefined };
  tokens?: { remaining: number; resetMs: number | undefined };
}

export function readRateHeaders(headers: Readonly<Record<string, string>>, now: number): RateHeaders {
  const out: RateHeaders = {};
  const retryAfterMs = retryAfterWait(headers, now);
  if (retryAfterMs !== undefined) out.retryAfterMs = retryAfterMs;
  const requests = window(
    headers['anthropic-ratelimit-requests-remaining'] ?? headers['x-ratelimit-remaining-requests'],
    headers['anthropic-ratelimit-requests-reset'] ?? headers['x-ratelimit-reset-requests'],
    now,
  );
  if (requests) out.requests = requests;
  const tokens = window(
    headers['anthropic-ratelimit-tokens-remaining'] ??
      headers['anthropic-ratelimit-input-tokens-remaining'] ??
      headers['x-ratelimit-remaining-tokens'],
    headers['anthropic-ratelimit-tokens-reset'] ??
      headers['anthropic-ratelimit-input-tokens-reset'] ??
      headers['x-ratelimit-reset-tokens'],
    now,
  );
  if (tokens) out.tokens = tokens;
  return out;
}

/** Server-requested wait, from `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function retryAfterWait(headers: Readonly<Record<string, string>>, now: number): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const after = headers['retry-after'];
  if (after === undefined || after.trim() === '') return undefined;
  const seconds = Number(after);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function window(
  remaining: string | undefined,
  reset: string | undefined,
  now: number,
): { remaining: number; resetMs: number | undefined } | undefined {
  if (remaining === undefined || remaining.trim() === '') return undefined;
  const left = Number(remaining);
  if (!Number.isFinite(left)) return undefined;
  return { remaining: Math.max(0, left), resetMs: reset === undefined ? undefined : resetIn(reset, now) };
}

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A reset as a wait in ms: OpenAI's durations (`20ms`, `1s`, `6m0s`, `1h2m3.5s`), a bare number
 * of seconds, or Anthropic's RFC 3339 time.
 */
export function resetIn(text: string, now: number): number | undefined {
  const value = text.trim();
  if (value === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  if (/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(value)) {
    let total = 0;
    for (const [, amount, unit] of value.matchAll(DURATION_PART))
      total += Number(amount) * (UNIT_MS[unit as string] ?? 0);
    return total;
  }
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
