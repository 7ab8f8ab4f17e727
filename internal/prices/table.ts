import { createRequire } from 'node:module';
import type * as GenaiPrices from '@pydantic/genai-prices';
import type { Price, PriceOverrides } from './price.js';

/**
 * axe's provider names and the price table's provider ids. `ollama` is a local server: no price.
 * `opencode` (OpenCode Zen) resells other providers' models: priced by the model's own name.
 */
const PROVIDER_IDS: Readonly<Record<string, string | null>> = {
  anthropic: 'anthropic',
  openai: 'openai',
  google: 'google',
  gemini: 'google',
  bedrock: 'aws',
  openrouter: 'openrouter',
  xai: 'x-ai',
  minimax: 'minimax',
  ollama: null,
};

let table: typeof GenaiPrices | undefined;

/**
 * `@pydantic/genai-prices` holds every provider's models in one 800 KB module that takes ~50 ms to
 * load: required on the first price asked for, never at start-up (the build keeps it outside the
 * bundle). Its data is the one shipped with the pinned version: it fetches nothing.
 */
function priceTable(): typeof GenaiPrices {
  table ??= createRequire(import.meta.filename)('@pydantic/genai-prices') as typeof GenaiPrices;
  return table;
}

/** Where a custom provider's requests go, when priceFor is told: a loopback server is local. */
export interface PriceContext {
  /** The provider's base URL (a custom provider is priced by its host, e.g. `api.groq.com`). */
  baseUrl?: string;
  /** Whether `provider` is one of axe's built-in providers (priced by name whatever its URL). */
  builtin?: boolean;
}

/**
 * The price of `model` served by axe's provider `provider`: config.toml's `[prices]` entry for
 * `provider/model` first, else the price table's. Undefined when neither knows it (a local model,
 * an unknown one): a missing price is never taken as free.
 */
export function priceFor(
  provider: string,
  model: string,
  overrides: PriceOverrides | undefined,
  context: PriceContext = {},
): Price | undefined {
  const own = overrides?.[`${provider}/${model}`] ?? aliasOverride(provider, model, overrides);
  if (own) return fromOverride(own);
  const options = tableOptions(provider, context);
  if (!options) return undefined;
  const found = priceTable().calcPrice({}, model, options);
  return found ? fromModelPrice(found.model_price) : undefined;
}

function aliasOverride(provider: string, model: string, overrides: PriceOverrides | undefined) {
  const alias = provider === 'gemini' ? 'google' : provider === 'google' ? 'gemini' : undefined;
  return alias ? overrides?.[`${alias}/${model}`] : undefined;
}

function fromOverride(own: PriceOverrides[string]): Price {
  return {
    input: own.input,
    output: own.output,
    ...(own.cache_read !== undefined ? { cacheRead: own.cache_read } : {}),
    ...(own.cache_write !== undefined ? { cacheWrite: own.cache_write } : {}),
  };
}

/** How the price table is asked for `provider`'s models; undefined: it has none. */
function tableOptions(
  provider: string,
  context: PriceContext,
): { providerId?: string; providerApiUrl?: string } | undefined {
  const known = PROVIDER_IDS[provider];
  if (known === null) return undefined;
  if (known !== undefined) return { providerId: known };
  if (provider === 'opencode') return {};
  if (context.builtin) return undefined;
  // A custom provider: by its base URL's host, else by a name the table knows (`groq`, `mistral`).
  const url = context.baseUrl;
  if (url !== undefined && url !== '') return isLocal(url) ? undefined : { providerApiUrl: url };
  return priceTable().findProvider({ providerId: provider })?.id === provider
    ? { providerId: provider }
    : undefined;
}

/** A base URL on this machine or a private name: a local server, not a priced API. */
function isLocal(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return true;
  }
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\./.test(host) ||
    host === '::1' ||
    !host.includes('.')
  );
}

/**
 * The table's prices as axe's: a tiered price (Anthropic's above 200,000 input tokens) by its
 * base tier, which is what every request under the threshold pays.
 */
function fromModelPrice(prices: GenaiPrices.ModelPrice): Price | undefined {
  const input = perMillion(prices.input_mtok);
  const output = perMillion(prices.output_mtok);
  if (input === undefined || output === undefined) return undefined;
  const cacheRead = perMillion(prices.cache_read_mtok);
  const cacheWrite = perMillion(prices.cache_write_mtok);
  return {
    input,
    output,
    ...(cacheRead !== undefined ? { cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWrite } : {}),
  };
}

function perMillion(value: GenaiPrices.ModelPrice[string]): number | undefined {
  if (typeof value === 'number') return value;
  return value?.base;
}
