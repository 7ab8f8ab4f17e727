export { RateGate, type RateLimits } from './gate.js';
export { RateGates } from './gates.js';
export { type RateHeaders, readRateHeaders, resetIn } from './headers.js';
