import { onAbort } from '../abort.js';
import { readRateHeaders } from './headers.js';

/** Limits set by hand (`--rpm`, `--tpm`): requests and tokens per minute. */
export interface RateLimits {
  rpm?: number;
  tpm?: number;
}

/** How long everyone waits after a 429 or 529 that names no time. */
const DEFAULT_PAUSE_MS = 1000;
/** Of the rate seen before a 429, the share kept afterwards when the server sends no headers. */
const BACKOFF_SHARE = 0.8;
/** Each answer without a refusal shortens the learned spacing by this much (back to full speed). */
const RECOVERY = 0.995;
/** A further refusal while spaced: the spacing grows by at least this much. */
const SLOWER = 1.5;
/**
 * A refusal without rate headers teaches a spacing at once when the gate was busy (at least this
 * many answers in the last second: the refusal marks the rate it was sent at), else only when
 * another refusal came within REPEAT_WINDOW_MS. A lone 429 at a few requests a second is the
 * pause's to handle: spacing every later request at that low rate would slow the rest of a run
 * for one transient refusal.
 */
const BUSY_ANSWERS = 10;
const REPEAT_WINDOW_MS = 10_000;
/** The successes remembered to learn a rate from (the last second's). */
const RECENT = 512;

/** A request waiting at the gate. */
interface Waiter {
  tokens: number;
  go(): void;
}

/**
 * One provider's gate, shared by every request of every run handed the same RateGates. A request
 * passes it before it is sent (`admit`) and reports its answer's status and headers (`done`):
 * - a 429 / 529, with its `retry-after` (or a wait the body named, `pause`), closes the gate for
 *   everyone until that time, not just for the request that was refused;
 * - the requests and tokens a server says are left until its reset are counted down by what is
 *   sent, and a request that would go over waits for the reset: slowing down before a refusal;
 * - after repeated refusals with no such headers, requests are spaced at a little under the rate
 *   that was refused, and speed up again with each answer;
 * - `rpm` / `tpm` by hand: token buckets of one second's worth.
 * Requests that wait go in arrival order. A gate with nothing to keep admits at once, with no
 * promise and no timer.
 */
export class RateGate {
  private pausedUntil = 0;
  private spacingMs = 0;
  /** When the last refusal that started a pause came (0: none yet). */
  private lastRefusalAt = 0;
  private nextStart = 0;
  private inFlight = 0;
  private requestsLeft: { left: number; until: number } | undefined;
  private tokensLeft: { left: number; until: number } | undefined;
  private readonly requestBucket: Bucket | undefined;
  private readonly tokenBucket: Bucket | undefined;
  private readonly recent: number[] = [];
  private readonly waiting: Waiter[] = [];
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  /** How many responses were refused with a 429 or 529 (for reports and tests). */
  refused = 0;

  constructor(limits: RateLimits = {}) {
    this.requestBucket =
      limits.rpm && limits.rpm > 0
        ? new Bucket(limits.rpm / 60_000, Math.max(1, limits.rpm / 60))
        : undefined;
    this.tokenBucket =
      limits.tpm && limits.tpm > 0
        ? new Bucket(limits.tpm / 60_000, Math.max(1, limits.tpm / 60))
        : undefined;
  }

  /**
   * Before sending a request of about `tokens` tokens: undefined when it may go now, else a
   * promise that resolves when it may, or rejects with the signal's reason (a deadline, Ctrl-C).
   */
  admit(tokens: number, signal: AbortSignal): Promise<void> | undefined {
    const now = Date.now();
    if (this.waiting.length === 0 && this.waitMs(tokens, now) <= 0) {
      this.take(tokens, now);
      return undefined;
    }
    signal.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        tokens,
        go: () => {
          leave();
          resolve();
        },
      };
      const leave = onAbort(signal, () => {
        const at = this.waiting.indexOf(waiter);
        if (at !== -1) this.waiting.splice(at, 1);
        this.schedule();
        reject(signal.reason);
      });
      this.waiting.push(waiter);
      this.schedule();
    });
  }

  /** After an admitted request's answer (or failure: status 0): what it says of the limits. */
  done(status: number, headers: Readonly<Record<string, string>>): void {
    const now = Date.now();
    this.inFlight = Math.max(0, this.inFlight - 1);
    const told = readRateHeaders(headers, now);
    if (told.requests) {
      this.requestsLeft = {
        left: told.requests.remaining - this.inFlight,
        until: now + (told.requests.resetMs ?? DEFAULT_PAUSE_MS),
      };
    }
    if (told.tokens) {
      this.tokensLeft = {
        left: told.tokens.remaining,
        until: now + (told.tokens.resetMs ?? DEFAULT_PAUSE_MS),
      };
    }
    if (status === 429 || status === 529) {
      this.refused++;
      // The other requests refused in the same burst (sent before the first refusal came back)
      // say nothing new: the spacing is learned once per pause.
      const fresh = now >= this.pausedUntil;
      this.pause(told.retryAfterMs ?? DEFAULT_PAUSE_MS, now);
      if (fresh) {
        const repeated = this.lastRefusalAt > 0 && now - this.lastRefusalAt <= REPEAT_WINDOW_MS;
        this.lastRefusalAt = now;
        if (!told.requests && !told.tokens) this.learnSpacing(now, repeated);
      }
    } else if (status > 0 && status < 300) {
      this.recent.push(now);
      if (this.recent.length > RECENT) this.recent.shift();
      if (this.spacingMs > 0) {
        this.spacingMs *= RECOVERY;
        if (this.spacingMs < 1) this.spacingMs = 0;
      }
    }
    if (this.waiting.length > 0) this.schedule();
  }

  /** Closes the gate for everyone for `ms` (a server's `retry-after`, Gemini's `retryDelay`). */
  pause(ms: number, now = Date.now()): void {
    this.pausedUntil = Math.max(this.pausedUntil, now + ms);
    if (this.waiting.length > 0) this.schedule();
  }

  /** A request admitted and then not sent (its call failed before): nothing to wait for. */
  cancel(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
  }

  /** After a refusal without rate headers: space requests at a share of the rate that was refused. */
  private learnSpacing(now: number, repeated: boolean): void {
    const since = now - 1000;
    let count = 0;
    for (let i = this.recent.length - 1; i >= 0 && (this.recent[i] as number) > since; i--) count++;
    // No answer in the last second: no rate to go by (the pause alone holds everyone back).
    if (count === 0 || (count < BUSY_ANSWERS && !repeated)) return;
    this.spacingMs = Math.max(this.spacingMs * SLOWER, 1000 / Math.max(1, count * BACKOFF_SHARE));
  }

  /** How long a request of `tokens` must still wait (0 or less: it may go). */
  private waitMs(tokens: number, now: number): number {
    let wait = this.pausedUntil - now;
    if (this.spacingMs > 0) wait = Math.max(wait, this.nextStart - now);
    const requests = this.requestsLeft;
    if (requests) {
      if (now >= requests.until) this.requestsLeft = undefined;
      else if (requests.left < 1) wait = Math.max(wait, requests.until - now);
    }
    const budget = this.tokensLeft;
    if (budget) {
      if (now >= budget.until) this.tokensLeft = undefined;
      else if (budget.left < tokens) wait = Math.max(wait, budget.until - now);
    }
    if (this.requestBucket) wait = Math.max(wait, this.requestBucket.waitMs(1, now));
    if (this.tokenBucket) wait = Math.max(wait, this.tokenBucket.waitMs(tokens, now));
    return wait;
  }

  private take(tokens: number, now: number): void {
    this.inFlight++;
    if (this.requestsLeft) this.requestsLeft.left--;
    if (this.tokensLeft) this.tokensLeft.left -= tokens;
    this.requestBucket?.take(1, now);
    this.tokenBucket?.take(tokens, now);
    if (this.spacingMs > 0) this.nextStart = now + this.spacingMs;
  }

  /** Lets the waiting requests that may go now go, in order; wakes again when the first may. */
  private schedule(): void {
    const now = Date.now();
    let first = this.waiting[0];
    while (first) {
      const wait = this.waitMs(first.tokens, now);
      if (wait > 0) {
        this.wakeAt(now + wait);
        return;
      }
      this.waiting.shift();
      this.take(first.tokens, now);
      first.go();
      first = this.waiting[0];
    }
    this.clearTimer();
  }

  private wakeAt(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.schedule();
      },
      Math.max(1, at - Date.now()),
    );
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/**
 * A token bucket: `perMs` refilled every millisecond up to `capacity`. A take may leave it below
 * zero (a request larger than a second's worth still goes, alone); the next ones wait it out.
 */
class Bucket {
  private level: number;
  private at = 0;

  constructor(
    private readonly perMs: number,
    private readonly capacity: number,
  ) {
    this.level = capacity;
  }

  waitMs(amount: number, now: number): number {
    this.refill(now);
    const need = Math.min(amount, this.capacity) - this.level;
    return need <= 0 ? 0 : need / this.perMs;
  }

  take(amount: number, now: number): void {
    this.refill(now);
    this.level -= amount;
  }

  private refill(now: number): void {
    if (this.at !== 0) this.level = Math.min(this.capacity, this.level + (now - this.at) * this.perMs);
    this.at = now;
  }
}
