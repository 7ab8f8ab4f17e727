export { type Cost, costOf, type Price, type PriceOverrides } from './price.js';
export { type Pricer, pricing } from './pricing.js';
export { priceFor } from './table.js';
export { agentDollars, treeDollars } from './tree.js';
