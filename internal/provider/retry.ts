import type { ProviderError } from '../errors.js';
import type { RetryPolicy } from './types.js';

/** Server-requested wait, from `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export { retryAfterWait as retryAfterMs } from '../ratelimit/headers.js';

/** The wait before retry number `retry` (1-based), with up to 25 % jitter taken off. */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const base =
    policy.backoff === 'exponential'
      ? policy.initialDelayMs * 2 ** (retry - 1)
      : policy.backoff === 'linear'
        ? policy.initialDelayMs * retry
        : policy.initialDelayMs;
  return Math.round(Math.min(base, policy.maxDelayMs) * (1 - random() * 0.25));
}

const RETRYABLE = new Set(['rate_limit', 'overloaded', 'server']);

function isRetryable(error: ProviderError): boolean {
  return error.details.shouldRetry !== false && RETRYABLE.has(error.category);
}

/**
 * The wait before the next attempt, or undefined when there must be none: no retries left, an
 * error that retrying cannot fix, a server-requested wait longer than `maxDelayMs`, or a wait
 * that would end after the deadline.
 */
export function nextRetryDelay(
  error: ProviderError,
  policy: RetryPolicy,
  retry: number,
  now: number,
  deadline: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  if (retry > policy.maxRetries || !isRetryable(error)) return undefined;
  const requested = error.details.retryAfterMs;
  if (requested !== undefined && requested > policy.maxDelayMs) return undefined;
  const delay = requested ?? backoffDelay(policy, retry, random);
  if (deadline !== undefined && now + delay >= deadline) return undefined;
  return delay;
}
