// PLACEHOLDER during development: replaced by the real command module.
import { RuntimeError } from '../internal/errors.js';

export async function runCommand(..._args: unknown[]): Promise<number> {
  throw new RuntimeError('axe run: not built yet');
}
