import type { GlobalConfig } from '../config/global.js';
import { isBuiltinProvider, resolveProviderSettings } from '../config/providers.js';
import type { Price } from './price.js';
import { priceFor } from './table.js';

/** `provider`'s `model` priced for one run or report: undefined when no price is known. */
export type Pricer = (provider: string, model: string) => Price | undefined;

/**
 * The prices of a config: `[prices]` first, then the table, a custom provider by its base URL
 * (`AXE_<NAME>_BASE_URL` or its `base_url`). Each `provider/model` is looked up once; the price
 * table is loaded on the first look-up, not before.
 */
export function pricing(config: GlobalConfig | undefined, env: NodeJS.ProcessEnv): Pricer {
  const known = new Map<string, Price | undefined>();
  return (provider, model) => {
    const key = `${provider}/${model}`;
    if (known.has(key)) return known.get(key);
    const builtin = isBuiltinProvider(provider);
    const baseUrl = builtin || !config ? undefined : baseUrlOf(config, provider, env);
    const price = priceFor(provider, model, config?.prices, {
      builtin,
      ...(baseUrl !== undefined ? { baseUrl } : {}),
    });
    known.set(key, price);
    return price;
  };
}

function baseUrlOf(config: GlobalConfig, provider: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    return resolveProviderSettings(config, provider, env).baseUrl;
  } catch {
    // Not a provider this config knows: priced by its name, if the table knows it.
    return undefined;
  }
}
