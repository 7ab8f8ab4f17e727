import { addCost, type Cost, costOf, type Pricer } from '../prices/index.js';
import type { Usage } from '../provider/types.js';

/** What the outputs price an agent by: its `provider/model` as served and its own calls' usage. */
interface PricedAgent {
  model: string;
  usage: Usage;
  children: readonly PricedAgent[];
}

/**
 * One agent's own calls in dollars (its children not included): undefined when its model has no
 * known price. An agent that made no call cost nothing, priced or not.
 */
export function agentDollars(agent: Omit<PricedAgent, 'children'>, price: Pricer): Cost | undefined {
  const { usage } = agent;
  if (usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens === 0) {
    return { usd: 0, usdWithoutCache: 0 };
  }
  const slash = agent.model.indexOf('/');
  if (slash === -1) return undefined;
  const known = price(agent.model.slice(0, slash), agent.model.slice(slash + 1));
  return known ? costOf(usage, known) : undefined;
}

/**
 * The whole tree in dollars: undefined when any agent that made calls has no known price (a sum
 * that leaves some out would pass for the whole).
 */
export function treeDollars(agent: PricedAgent, price: Pricer): Cost | undefined {
  let total = agentDollars(agent, price);
  for (const child of agent.children) {
    const cost = total && treeDollars(child, price);
    total = cost && total ? addCost(total, cost) : undefined;
  }
  return total;
}

/** `$0.0123` (`$1.23` from a dollar up), as `axe runs` and `--verbose` print a cost. */
export function formatUsd(usd: number): string {
  return `$${usd < 1 ? usd.toFixed(4) : usd.toFixed(2)}`;
}
