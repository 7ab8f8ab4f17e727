// PLACEHOLDER during development: replaced by the real command module.
import { RuntimeError } from '../internal/errors.js';

export async function agentsCommand(..._args: unknown[]): Promise<number> {
  throw new RuntimeError('axe agents: not built yet');
}
