import { onAbort } from '../abort.js';
import { BudgetError } from '../errors.js';
import type { ChatRequest, Usage } from '../provider/types.js';

/**
 * Output tokens assumed for a call that sets no `max_tokens` (the provider's own default is not
 * known here; 4096 is Anthropic's and a common one).
 */
const DEFAULT_OUTPUT_ESTIMATE = 4096;

/** The reservation of every call when there is no budget: a release that does nothing. */
const UNLIMITED: Promise<() => void> = Promise.resolve(() => {});

/**
 * The tree-wide token budget: input + output tokens of every provider call, parent and children.
 *
 * Parallel calls reserve before they start, so a fan-out cannot overrun the budget many times
 * over: a call starts when the budget's remainder covers its estimate (its request's characters
 * / 4, plus its `max_tokens` or 4096) over the calls in flight, or when no other call is in
 * flight and the tree is still under the limit. Other calls wait (a deadline or Ctrl-C still
 * ends the wait). Once the tree has used its budget no call starts anywhere, the calls in flight
 * finish, and every waiting one fails with the BudgetError. The overrun is therefore bounded by
 * the calls in flight when the line was crossed. One call at a time (Go axe's sequential loop)
 * behaves exactly as a check before each call.
 */
export class Budget {
  private spent = 0;
  private reserved = 0;
  private inFlight = 0;
  /** Calls waiting to start, oldest first. */
  private readonly waiting = new Set<Waiter>();
  /** Undefined or 0: unlimited. */
  readonly limit: number | undefined;

  constructor(limit?: number) {
    this.limit = limit !== undefined && limit > 0 ? limit : undefined;
  }

  get used(): number {
    return this.spent;
  }

  add(usage: Usage): void {
    this.spent += usage.inputTokens + usage.outputTokens;
  }

  /** After the run: the error for a tree that used more than its budget, if it did. */
  overrun(): BudgetError | undefined {
    return this.limit !== undefined && this.spent > this.limit
      ? new BudgetError(this.spent, this.limit)
      : undefined;
  }

  /**
   * Waits until `request` may be sent and reserves its estimate; returns the release to call
   * when the call has ended (after `add` of its usage). Throws the BudgetError once the budget
   * is spent, and the signal's reason when it fires while waiting.
   */
  reserve(request: ChatRequest, signal: AbortSignal): Promise<() => void> {
    // No budget: nothing to wait for, and no async frame per model call.
    if (this.limit === undefined) return UNLIMITED;
    return this.reserveWithin(this.limit, request, signal);
  }

  private async reserveWithin(limit: number, request: ChatRequest, signal: AbortSignal): Promise<() => void> {
    const estimate =
      Math.ceil(JSON.stringify(request).length / 4) + (request.maxTokens ?? DEFAULT_OUTPUT_ESTIMATE);
    signal.throwIfAborted();
    if (this.spent >= limit) throw new BudgetError(this.spent, limit);
    if (this.fits(estimate, limit)) return this.take(estimate);
    return new Promise<() => void>((resolve, reject) => {
      const leave = onAbort(signal, () => {
        this.waiting.delete(waiter);
        reject(signal.reason);
      });
      const waiter: Waiter = {
        estimate,
        admit: (release) => {
          leave();
          resolve(release);
        },
        fail: (error) => {
          leave();
          reject(error);
        },
      };
      this.waiting.add(waiter);
    });
  }

  private fits(estimate: number, limit: number): boolean {
    return this.inFlight === 0 || this.spent + this.reserved + estimate <= limit;
  }

  private take(estimate: number): () => void {
    this.reserved += estimate;
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= estimate;
      this.inFlight--;
      this.admitWaiting();
    };
  }

  /**
   * After a release: the waiting calls that now fit start, oldest first (a later, smaller one may
   * pass one that still does not fit); once the budget is spent every one fails. The others stay
   * as they are: waking them all to check again made a wide fan-out under a budget O(n²).
   */
  private admitWaiting(): void {
    const limit = this.limit;
    if (limit === undefined) return;
    for (const waiter of this.waiting) {
      if (this.spent >= limit) {
        this.waiting.delete(waiter);
        waiter.fail(new BudgetError(this.spent, limit));
      } else if (this.fits(waiter.estimate, limit)) {
        this.waiting.delete(waiter);
        waiter.admit(this.take(waiter.estimate));
      }
    }
  }
}

/** A call waiting for its share of the budget. */
interface Waiter {
  estimate: number;
  admit(release: () => void): void;
  fail(error: BudgetError): void;
}
