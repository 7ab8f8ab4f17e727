export { startFakeLlm } from './server.js';
export type * from './types.js';
