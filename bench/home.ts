import { join } from 'node:path';

/**
 * The environment of an axe a bench starts: everything axe keeps (config, data, cache) under the
 * bench's own `home`, the fake server as Anthropic's, and what the bench adds.
 */
export function benchEnv(home: string, fakeUrl: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CACHE_HOME: join(home, 'cache'),
    AXE_ANTHROPIC_BASE_URL: fakeUrl,
    ANTHROPIC_API_KEY: 'bench-key',
    ...extra,
  };
}
