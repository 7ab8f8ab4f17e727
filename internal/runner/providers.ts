import type { AgentSpec } from '../agent/spec.js';
import type { CassettePlayer, CassetteRecorder } from '../cassette/cassette.js';
import type { GlobalConfig } from '../config/global.js';
import { resolveProviderSettings } from '../config/providers.js';
import { pricing } from '../prices/pricing.js';
import { createHttpPool, createProvider, type HttpPool, keyMissing } from '../provider/index.js';
import type { Provider, ProviderSettings, RetryPolicy } from '../provider/types.js';
import type { RateGates } from '../ratelimit/gates.js';
import type { ProviderSource } from './context.js';
import { resolveModel } from './resolve.js';

/** Providers over the run's HTTP pool; every exchange also goes to the recorder when recording. */
export function liveProviders(options: {
  globalConfig: GlobalConfig;
  env: NodeJS.ProcessEnv;
  pool: HttpPool;
  recorder?: CassetteRecorder;
  /** The providers' rate gates: the run's own, or shared with other runs (a batch's). */
  rateGates?: RateGates;
}): ProviderSource {
  // Settings, and a provider per retry policy, made once per provider name: a fan-out's children
  // share their parent's. A name that cannot be resolved is not kept: each agent says why.
  const made = new Map<string, { settings: ProviderSettings; byRetry: Map<RetryPolicy, Provider> }>();
  const price = pricing(options.globalConfig, options.env);
  return {
    priceOf: (model) => price(model.provider, model.model),
    forAgent(model, spec, agentPath) {
      let entry = made.get(model.provider);
      if (!entry) {
        const settings = resolveProviderSettings(options.globalConfig, model.provider, options.env);
        entry = { settings, byRetry: new Map() };
        made.set(model.provider, entry);
        // The first agent on it calls it once it is set up: the connection opens meanwhile (for
        // the next ones the pool has it already).
        connectAhead(options.pool, settings);
      }
      const { settings, byRetry } = entry;
      let provider = byRetry.get(spec.retry);
      if (!provider) {
        const gate = options.rateGates?.gate(settings.name);
        provider = createProvider(settings, {
          retry: spec.retry,
          pool: options.pool,
          ...(gate ? { gate } : {}),
        });
        byRetry.set(spec.retry, provider);
      }
      return {
        provider: options.recorder ? options.recorder.wrap(provider, agentPath) : provider,
        api: settings.api,
      };
    },
  };
}

/** Providers that answer from a cassette only: no provider settings, no key, no network. */
export function replayProviders(player: CassettePlayer): ProviderSource {
  // A replay reads no config.toml: the price table's prices.
  const price = pricing(undefined, {});
  return {
    priceOf: (model) => price(model.provider, model.model),
    forAgent: (model, _spec, agentPath) => ({ provider: player.provider(model.provider, agentPath) }),
  };
}

/**
 * The run's HTTP pool, made before the run starts (the CLI does while it reads stdin), the
 * top-level agent's first connection to its provider already opening: the run takes it
 * (`RunRequest.pool`) and closes it. Whatever is wrong (the model, the config) is left for the run
 * to report; a run that never starts leaves only that connection, which does not keep the process
 * alive.
 */
export function poolConnectingEarly(
  spec: AgentSpec,
  modelOverride: string | undefined,
  globalConfig: () => Promise<GlobalConfig>,
  env: NodeJS.ProcessEnv,
): HttpPool {
  const pool = createHttpPool();
  const connect = async (): Promise<void> => {
    const { provider } = resolveModel(spec, { overrides: { model: modelOverride } });
    connectAhead(pool, resolveProviderSettings(await globalConfig(), provider, env));
  };
  connect().catch(() => {
    // The run says what is wrong.
  });
  return pool;
}

/** The provider's first connection, opened now: not without a key (that run fails unsent). */
function connectAhead(pool: HttpPool, settings: ProviderSettings): void {
  if (!keyMissing(settings)) pool.preconnect(settings.baseUrl, settings.headers);
}
