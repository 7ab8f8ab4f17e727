// PLACEHOLDER during development: replaced by the real command module.
import { RuntimeError } from '../internal/errors.js';

export async function validateCommand(..._args: unknown[]): Promise<number> {
  throw new RuntimeError('axe validate: not built yet');
}
