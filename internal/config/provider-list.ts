import { errorMessage } from '../errors.js';
import type { GlobalConfig } from './global.js';
import { builtinProviderNames, resolveProviderSettings } from './providers.js';

/** One provider as `axe models` lists it: where it is and where its key comes from. */
export interface ListedProvider {
  name: string;
  /** The wire format; undefined when a `[providers.<name>]` table cannot be used (see `problem`). */
  api?: string;
  baseUrl?: string;
  /** `env`: the variable is set; `config`: config.toml's `api_key`; `none`: no key. */
  keySource: 'env' | 'config' | 'none';
  /** The variable the key is read from (`OPENAI_API_KEY`; Bedrock: `AWS_ACCESS_KEY_ID`). */
  keyVariable: string;
  /** Whether a run on it fails for want of a key now. */
  keyMissing: boolean;
  /** Another name of it (`gemini` for `google`). */
  aliases: string[];
  /** Why a custom provider's table cannot be used, as a run would say it. */
  problem?: string;
}

/**
 * Every provider a model reference can name: the built-in ones, then each `[providers.<name>]` of
 * config.toml that is not one of them, each resolved as a run resolves it (env > config.toml >
 * built-in default), without sending anything.
 */
export function listProviders(config: GlobalConfig, env: NodeJS.ProcessEnv): ListedProvider[] {
  const { names, aliases } = builtinProviderNames();
  const custom = Object.keys(config.providers).filter((name) => !names.includes(name) && !(name in aliases));
  return [...names, ...custom].map((name) => {
    const otherNames = Object.keys(aliases).filter((alias) => aliases[alias] === name);
    try {
      const settings = resolveProviderSettings(config, name, env);
      return {
        name,
        api: settings.api,
        ...(settings.baseUrl !== '' ? { baseUrl: settings.baseUrl } : {}),
        keySource: settings.apiKey === undefined ? 'none' : (settings.apiKeySource ?? 'env'),
        keyVariable: settings.apiKeyEnv,
        keyMissing: settings.apiKeyRequired && settings.apiKey === undefined,
        aliases: otherNames,
      };
    } catch (error) {
      return {
        name,
        keySource: 'none',
        keyVariable: '',
        keyMissing: false,
        aliases: otherNames,
        problem: errorMessage(error),
      };
    }
  });
}
