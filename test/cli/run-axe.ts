import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { AXE_BIN } from '../run/cli.js';
import { tempDirForFile } from '../temp-dir.js';

export { AXE_BIN as CLI } from '../run/cli.js';

export interface AxeResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A temp home with XDG dirs inside it, and a working directory; removed after the test file. */
export function tempHome(): { home: string; cwd: string; configDir: string; env: NodeJS.ProcessEnv } {
  const home = tempDirForFile('axe-cli-');
  const cwd = join(home, 'work');
  mkdirSync(cwd);
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
  };
  return { home, cwd, configDir: join(home, '.config', 'axe'), env };
}

/** Runs the built `axe` binary (npm run build) with a clean environment. */
export function axe(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): AxeResult {
  const result = spawnSync(process.execPath, [AXE_BIN, ...args], {
    cwd: options.cwd,
    env: options.env,
    encoding: 'utf8',
    // stdin is /dev/null, as for a cron job: not an (empty) pipe.
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 15_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}
