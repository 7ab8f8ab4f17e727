import { initConfigDir } from '../internal/config/init.js';
import { resolvePaths } from '../internal/config/paths.js';
import { ConfigError } from '../internal/errors.js';
import { stdout } from './stdio.js';

/** `axe config path` | `axe config init`. */
export async function configCommand(action: string): Promise<number> {
  const { configDir } = resolvePaths(process.env);
  if (action === 'path') {
    stdout.write(`${configDir}\n`);
    return 0;
  }
  if (action !== 'init') {
    throw new ConfigError(`unknown config action "${action}": expected "path" or "init"`);
  }
  await initConfigDir(configDir);
  stdout.write(`${configDir}\n`);
  return 0;
}
