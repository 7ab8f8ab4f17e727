import { RateGate, type RateLimits } from './gate.js';

/**
 * One RateGate per provider name, shared by every run handed this object: a batch hands one to
 * all its items, a single `axe run` makes its own. `limits` are the ones set by hand, for every
 * provider alike or by provider name.
 */
export class RateGates {
  private readonly gates = new Map<string, RateGate>();

  constructor(private readonly limits: RateLimits | ((provider: string) => RateLimits | undefined) = {}) {}

  gate(provider: string): RateGate {
    let gate = this.gates.get(provider);
    if (!gate) {
      gate = new RateGate(typeof this.limits === 'function' ? this.limits(provider) : this.limits);
      this.gates.set(provider, gate);
    }
    return gate;
  }

  /** Responses refused with a 429 or 529, over every provider. */
  get refused(): number {
    let total = 0;
    for (const gate of this.gates.values()) total += gate.refused;
    return total;
  }
}
