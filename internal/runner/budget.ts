import { BudgetError } from '../errors.js';
import type { Usage } from '../provider/types.js';

/** The tree-wide token budget: input + output tokens of every provider call, parent and children. */
export class Budget {
  private spent = 0;
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

  /** Called before every provider call: no call starts once the budget is spent. */
  check(): void {
    if (this.limit !== undefined && this.spent >= this.limit) throw new BudgetError(this.spent, this.limit);
  }
}
