import { onAbort } from '../abort.js';
import { BudgetError, UnpricedModelError } from '../errors.js';
import { costOf, type Price } from '../prices/price.js';
import type { ChatRequest, Usage } from '../provider/types.js';

/**
 * Output tokens assumed for a call that sets no `max_tokens` (the provider's own default is not
 * known here; 4096 is Anthropic's and a common one).
 */
const DEFAULT_OUTPUT_ESTIMATE = 4096;

/** The reservation of every call when there is no budget: a release that does nothing. */
const UNLIMITED: Promise<() => void> = Promise.resolve(() => {});

const NOTHING_HELD = (): void => {};

/** What a budget caps; a limit left out, or 0, is no limit. */
export interface BudgetLimits {
  /** Input + output tokens of every call. */
  maxTokens?: number;
  /** US dollars of every call, each at its model's price (internal/prices/). */
  maxCostUsd?: number;
}

/** What one call is expected to use, reserved before it is sent. */
export interface Estimate {
  tokens: number;
  usd: number;
}

/**
 * A budget a tree's Budget counts in as its parent: another Budget (a local batch's), or one kept
 * outside this process (a queued batch's, shared by every worker). `reserveEstimate` waits until
 * the estimate may be held and returns its release; `add` counts a call's usage before its release.
 */
export interface SharedLimit {
  readonly needsPrice: boolean;
  /** Whether no new call may start anywhere under it. */
  readonly exhausted: boolean;
  reserveEstimate(estimate: Estimate, signal: AbortSignal): Promise<() => void>;
  add(usage: Usage, price?: Price): void;
}

/**
 * The tree-wide budget: input + output tokens, and dollars, of every provider call, parent and
 * children.
 *
 * Parallel calls reserve before they start, so a fan-out cannot overrun the budget many times
 * over: a call starts when the budget's remainder covers its estimate (its request's characters
 * / 4, plus its `max_tokens` or 4096; in dollars at its price) over the calls in flight, or when
 * no other call is in flight and the tree is still under the limit. Other calls wait (a deadline
 * or Ctrl-C still ends the wait). Once the tree has used its budget no call starts anywhere, the
 * calls in flight finish, and every waiting one fails with the BudgetError. The overrun is
 * therefore bounded by the calls in flight when the line was crossed. One call at a time (Go
 * axe's sequential loop) behaves exactly as a check before each call.
 *
 * A budget may have a shared parent (a batch's, over all its items' trees): a call then reserves
 * in its own budget and in the parent, and its usage counts in both, so the parent's overrun too
 * is bounded by the calls in flight across everything that shares it.
 */
export class Budget implements SharedLimit {
  private spent = 0;
  private spentUsd = 0;
  private reserved = 0;
  private reservedUsd = 0;
  private inFlight = 0;
  /** Calls waiting to start, oldest first. */
  private readonly waiting = new Set<Waiter>();
  /** Tokens; undefined: unlimited. */
  readonly limit: number | undefined;
  /** US dollars; undefined: unlimited. */
  readonly usdLimit: number | undefined;
  readonly parent: SharedLimit | undefined;
  /** Whether each call must come with its price: this budget or a parent caps dollars. */
  readonly needsPrice: boolean;
  /** Neither a limit nor a parent: every call starts at once, with nothing to count but use. */
  private readonly free: boolean;

  /** `limits` as a number: a token limit (the tree's `--max-tokens`). */
  constructor(limits?: number | BudgetLimits, parent?: SharedLimit) {
    const { maxTokens, maxCostUsd } = typeof limits === 'number' ? { maxTokens: limits } : (limits ?? {});
    this.limit = maxTokens !== undefined && maxTokens > 0 ? maxTokens : undefined;
    this.usdLimit = maxCostUsd !== undefined && maxCostUsd > 0 ? maxCostUsd : undefined;
    this.parent = parent;
    this.needsPrice = this.usdLimit !== undefined || (parent?.needsPrice ?? false);
    this.free = this.limit === undefined && this.usdLimit === undefined && parent === undefined;
  }

  /** Tokens used (input + output). */
  get used(): number {
    return this.spent;
  }

  /** Dollars used, counted only while a dollar limit is kept (calls bring their price then). */
  get usedUsd(): number {
    return this.spentUsd;
  }

  /** Whether no new call may start: this budget or its parent has reached a limit. */
  get exhausted(): boolean {
    return this.spentError() !== undefined || (this.parent?.exhausted ?? false);
  }

  /** A call's usage, at `price` (needed while dollars are capped). Counts in the parent too. */
  add(usage: Usage, price?: Price): void {
    this.spent += usage.inputTokens + usage.outputTokens;
    if (price) this.spentUsd += costOf(usage, price).usd;
    this.parent?.add(usage, price);
  }

  /** After the run: the error for a tree that used more than its budget, if it did. */
  overrun(): BudgetError | undefined {
    if (this.limit !== undefined && this.spent > this.limit) return new BudgetError(this.spent, this.limit);
    if (this.usdLimit !== undefined && this.spentUsd > this.usdLimit) {
      return new BudgetError(this.spentUsd, this.usdLimit, 'usd');
    }
    return undefined;
  }

  /**
   * Waits until `request` may be sent and reserves its estimate, here and in the parent; returns
   * the release to call when the call has ended (after `add` of its usage). Throws the
   * BudgetError once a budget is spent, an UnpricedModelError when dollars are capped and the
   * call has no price, and the signal's reason when it fires while waiting.
   */
  reserve(request: ChatRequest, signal: AbortSignal, price?: Price): Promise<() => void> {
    // No budget: nothing to wait for, and no async frame per model call.
    if (this.free) return UNLIMITED;
    if (this.needsPrice && price === undefined) return Promise.reject(new UnpricedModelError(request.model));
    const tokensIn = Math.ceil(JSON.stringify(request).length / 4);
    const tokensOut = request.maxTokens ?? DEFAULT_OUTPUT_ESTIMATE;
    const usd = price ? (tokensIn * price.input + tokensOut * price.output) / 1e6 : 0;
    return this.reserveEstimate({ tokens: tokensIn + tokensOut, usd }, signal);
  }

  /** `reserve` once the estimate is known; a child budget's reservation reaches its parent through it. */
  async reserveEstimate(estimate: Estimate, signal: AbortSignal): Promise<() => void> {
    const own =
      this.limit !== undefined || this.usdLimit !== undefined
        ? await this.reserveOwn(estimate, signal)
        : NOTHING_HELD;
    if (!this.parent) return own;
    try {
      const shared = await this.parent.reserveEstimate(estimate, signal);
      return () => {
        shared();
        own();
      };
    } catch (error) {
      own();
      throw error;
    }
  }

  private reserveOwn(estimate: Estimate, signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    const spent = this.spentError();
    if (spent) throw spent;
    if (this.fits(estimate)) return Promise.resolve(this.take(estimate));
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

  /** The error once a limit of this budget (not its parent's) is reached. */
  private spentError(): BudgetError | undefined {
    if (this.limit !== undefined && this.spent >= this.limit) return new BudgetError(this.spent, this.limit);
    if (this.usdLimit !== undefined && this.spentUsd >= this.usdLimit) {
      return new BudgetError(this.spentUsd, this.usdLimit, 'usd');
    }
    return undefined;
  }

  private fits(estimate: Estimate): boolean {
    if (this.inFlight === 0) return true;
    const tokensFit = this.limit === undefined || this.spent + this.reserved + estimate.tokens <= this.limit;
    const usdFit =
      this.usdLimit === undefined || this.spentUsd + this.reservedUsd + estimate.usd <= this.usdLimit;
    return tokensFit && usdFit;
  }

  private take(estimate: Estimate): () => void {
    this.reserved += estimate.tokens;
    this.reservedUsd += estimate.usd;
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.reserved -= estimate.tokens;
      this.reservedUsd -= estimate.usd;
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
    for (const waiter of this.waiting) {
      const spent = this.spentError();
      if (spent) {
        this.waiting.delete(waiter);
        waiter.fail(spent);
      } else if (this.fits(waiter.estimate)) {
        this.waiting.delete(waiter);
        waiter.admit(this.take(waiter.estimate));
      }
    }
  }
}

/** A call waiting for its share of the budget. */
interface Waiter {
  estimate: Estimate;
  admit(release: () => void): void;
  fail(error: BudgetError): void;
}
