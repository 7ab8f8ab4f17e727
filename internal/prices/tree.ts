import type { Usage } from '../provider/types.js';
import { addCost, type Cost, costOf } from './price.js';
import type { Pricer } from './pricing.js';

/** What an agent is priced by (a run's result, a recorded agent): its `provider/model` as served and its own calls' usage. */
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
