import type { GlobalConfig } from '../config/global.js';
import { resolveProviderSettings } from '../config/providers.js';
import { createProvider, type HttpPool, keyMissing } from '../provider/index.js';
import type { CassettePlayer, CassetteRecorder } from './cassette.js';
import type { ProviderSource } from './context.js';

/** Providers over the run's HTTP pool; every exchange also goes to the recorder when recording. */
export function liveProviders(options: {
  globalConfig: GlobalConfig;
  env: NodeJS.ProcessEnv;
  pool: HttpPool;
  recorder?: CassetteRecorder;
}): ProviderSource {
  return {
    forAgent(model, spec, agentPath) {
      const settings = resolveProviderSettings(options.globalConfig, model.provider, options.env);
      const provider = createProvider(settings, { retry: spec.retry, pool: options.pool });
      // The agent calls it once it is set up: the connection opens meanwhile.
      if (!keyMissing(settings)) options.pool.preconnect(settings.baseUrl, settings.headers);
      return {
        provider: options.recorder ? options.recorder.wrap(provider, agentPath) : provider,
        api: settings.api,
      };
    },
  };
}

/** Providers that answer from a cassette only: no provider settings, no key, no network. */
export function replayProviders(player: CassettePlayer): ProviderSource {
  return {
    forAgent: (model, _spec, agentPath) => ({ provider: player.provider(model.provider, agentPath) }),
  };
}
