import type { PriceOverrides } from '../config/global.js';
import type { Usage } from '../provider/types.js';

export type { PriceOverrides };

/**
 * What a model's tokens cost, in US dollars per million tokens. A cache price left out is the
 * plain input price (a provider that does not discount cached tokens).
 */
export interface Price {
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

/** A cost in US dollars: as billed, and as it would have been had no token come from the cache. */
export interface Cost {
  usd: number;
  usdWithoutCache: number;
}

/**
 * The dollars of `usage` at `price`. axe's `Usage` counts uncached input apart from the tokens
 * read from and written to the cache on every wire, so each is priced at its own rate; the
 * cache-less figure prices all three as plain input.
 */
export function costOf(usage: Usage, price: Price): Cost {
  const cached = usage.cacheReadTokens + usage.cacheWriteTokens;
  const output = usage.outputTokens * price.output;
  const usd =
    usage.inputTokens * price.input +
    usage.cacheReadTokens * (price.cacheRead ?? price.input) +
    usage.cacheWriteTokens * (price.cacheWrite ?? price.input) +
    output;
  const usdWithoutCache = (usage.inputTokens + cached) * price.input + output;
  return { usd: usd / 1e6, usdWithoutCache: usdWithoutCache / 1e6 };
}

/** The sum of two costs (a tree's calls). */
export function addCost(a: Cost, b: Cost): Cost {
  return { usd: a.usd + b.usd, usdWithoutCache: a.usdWithoutCache + b.usdWithoutCache };
}
