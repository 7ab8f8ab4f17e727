// PLACEHOLDER during development: replaced by the real command module.
import { RuntimeError } from '../internal/errors.js';

export async function configCommand(..._args: unknown[]): Promise<number> {
  throw new RuntimeError('axe config: not built yet');
}
