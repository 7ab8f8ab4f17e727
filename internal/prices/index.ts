export { addCost, type Cost, costOf, type Price, type PriceOverrides } from './price.js';
export { type Pricer, pricing } from './pricing.js';
export { type PriceContext, priceFor } from './table.js';
