import type { Pricer } from '../prices/index.js';
import { costOf } from '../prices/index.js';
import { sumCosts } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';

/**
 * The dollars of an item's tree: each agent's cost as its provider reported it (OpenRouter), else
 * its usage at its model's price; undefined when no agent of the tree has either.
 */
export function treeDollars(result: AgentRunResult, price: Pricer): number | undefined {
  const own = result.cost ?? agentDollars(result, price);
  return sumCosts([own, ...result.children.map((child) => treeDollars(child, price))]);
}

function agentDollars(result: AgentRunResult, price: Pricer): number | undefined {
  const slash = result.model.indexOf('/');
  if (slash <= 0) return undefined;
  const known = price(result.model.slice(0, slash), result.model.slice(slash + 1));
  return known ? costOf(result.usage, known).usd : undefined;
}
