/**
 * The fake's rate limit: a token bucket of `perSecond` requests (holding `burst`, default one
 * second's worth) in front of every route. A request beyond it is answered 429 with `retry-after`
 * (whole seconds, as real servers send it: the time until one request is free, rounded up) and
 * never reaches the script; with `headers`, every answer also says what is left, as OpenAI
 * (`x-ratelimit-remaining-requests`, `x-ratelimit-reset-requests: 250ms`) or Anthropic
 * (`anthropic-ratelimit-requests-remaining`, `anthropic-ratelimit-requests-reset` as a time) do.
 */
export interface RateLimitOptions {
  perSecond: number;
  burst?: number;
  headers?: 'openai' | 'anthropic';
}

export class RateLimiter {
  private level: number;
  private at = Date.now();
  private readonly capacity: number;

  constructor(private readonly options: RateLimitOptions) {
    this.capacity = options.burst ?? options.perSecond;
    this.level = this.capacity;
  }

  /** Takes one request from the bucket: whether it may pass, and the headers of its answer. */
  take(now = Date.now()): { allowed: boolean; headers: Record<string, string> } {
    this.level = Math.min(this.capacity, this.level + ((now - this.at) * this.options.perSecond) / 1000);
    this.at = now;
    const allowed = this.level >= 1;
    if (allowed) this.level -= 1;
    const headers = this.rateHeaders(now);
    if (!allowed) {
      const waitMs = ((1 - this.level) * 1000) / this.options.perSecond;
      headers['retry-after'] = String(Math.max(1, Math.ceil(waitMs / 1000)));
    }
    return { allowed, headers };
  }

  private rateHeaders(now: number): Record<string, string> {
    const style = this.options.headers;
    if (!style) return {};
    const remaining = String(Math.floor(this.level));
    // The time until the bucket is full again.
    const resetMs = Math.ceil(((this.capacity - this.level) * 1000) / this.options.perSecond);
    if (style === 'openai') {
      return {
        'x-ratelimit-limit-requests': String(this.options.perSecond * 60),
        'x-ratelimit-remaining-requests': remaining,
        'x-ratelimit-reset-requests': `${resetMs}ms`,
      };
    }
    return {
      'anthropic-ratelimit-requests-limit': String(this.options.perSecond * 60),
      'anthropic-ratelimit-requests-remaining': remaining,
      'anthropic-ratelimit-requests-reset': new Date(now + resetMs).toISOString(),
    };
  }
}
