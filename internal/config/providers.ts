import { ConfigError, RuntimeError } from '../errors.js';
import { NOT_FIELD_CHAR, TOKEN } from '../http/syntax.js';
import { awsCredentialSource } from '../provider/aws-credentials.js';
import type { ProviderApi, ProviderSettings } from '../provider/types.js';
import { trimSlash } from '../provider/wire.js';
import type { GlobalConfig, ProviderConfig } from './global.js';
import { own } from './own.js';

interface BuiltinProvider {
  api: ProviderApi;
  baseUrl: string;
  apiKeyEnv: string;
  apiKeyRequired: boolean;
}

/** The providers axe knows without any config. `gemini` is an alias of `google`. */
const BUILTIN_PROVIDERS: Readonly<Record<string, BuiltinProvider>> = {
  anthropic: {
    api: 'anthropic',
    baseUrl: 'https://api.anthropic.com',
    apiKeyEnv: 'ANTHROPIC_API_KEY',
    apiKeyRequired: true,
  },
  openai: {
    api: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    apiKeyEnv: 'OPENAI_API_KEY',
    apiKeyRequired: true,
  },
  openrouter: {
    api: 'openai',
    baseUrl: 'https://openrouter.ai/api/v1',
    apiKeyEnv: 'OPENROUTER_API_KEY',
    apiKeyRequired: true,
  },
  ollama: {
    api: 'ollama',
    baseUrl: 'http://localhost:11434',
    apiKeyEnv: 'OLLAMA_API_KEY',
    apiKeyRequired: false,
  },
  google: {
    api: 'google',
    baseUrl: 'https://generativelanguage.googleapis.com',
    apiKeyEnv: 'GEMINI_API_KEY',
    apiKeyRequired: true,
  },
  // Go axe's OpenCode Zen: the wire is picked by model (provider/opencode-route.ts).
  opencode: {
    api: 'opencode',
    baseUrl: 'https://opencode.ai/zen',
    apiKeyEnv: 'OPENCODE_API_KEY',
    apiKeyRequired: true,
  },
  // Go axe's Bedrock: the base URL is the region's (below); credentials are AWS's, not a key.
  bedrock: {
    api: 'bedrock',
    baseUrl: '',
    apiKeyEnv: 'AWS_ACCESS_KEY_ID',
    apiKeyRequired: false,
  },
  // Go axe's MiniMax: its Anthropic-compatible endpoint.
  minimax: {
    api: 'anthropic',
    baseUrl: 'https://api.minimax.io/anthropic',
    apiKeyEnv: 'MINIMAX_API_KEY',
    apiKeyRequired: true,
  },
};

const ALIASES: Readonly<Record<string, string>> = { gemini: 'google' };

/** Whether `name` is one of axe's built-in providers (or another name of one). */
export function isBuiltinProvider(name: string): boolean {
  return own(BUILTIN_PROVIDERS, own(ALIASES, name) ?? name) !== undefined;
}

/** Go axe's OpenRouter attribution headers: `AXE_OPENROUTER_<X>` > `[providers.openrouter] <x>`. */
function openRouterAttribution(table: ProviderConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  const headers: Record<string, string> = {};
  const pick = (variable: string, key: 'referer' | 'title' | 'categories') =>
    env[`AXE_OPENROUTER_${variable}`] || table[key] || undefined;
  const referer = pick('REFERER', 'referer');
  const title = pick('TITLE', 'title');
  const categories = pick('CATEGORIES', 'categories');
  if (referer) headers['HTTP-Referer'] = referer;
  if (title) headers['X-OpenRouter-Title'] = title;
  if (categories) headers['X-OpenRouter-Categories'] = categories;
  return headers;
}

/**
 * Go axe's region order: `AWS_REGION` > `AWS_DEFAULT_REGION` > `AXE_<NAME>_REGION` >
 * `[providers.<name>] region`.
 */
function awsSettings(
  providerName: string,
  table: ProviderConfig,
  env: NodeJS.ProcessEnv,
): NonNullable<ProviderSettings['aws']> {
  const region =
    env.AWS_REGION ||
    env.AWS_DEFAULT_REGION ||
    env[`AXE_${envName(providerName)}_REGION`] ||
    table.region ||
    undefined;
  return { ...(region ? { region } : {}), credentials: awsCredentialSource(env) };
}

/** Headers that frame the request: axe's own to set, a configured one would corrupt it. */
const FRAMING = new Set(['content-length', 'transfer-encoding', 'connection']);

/**
 * A header or key no HTTP request can carry (a line break, a control character, a name with a
 * space) is a config error naming where it came from (exit 2), not a network failure retried
 * and blamed on the provider.
 */
function checkSendable(
  provider: string,
  headers: Record<string, string>,
  apiKey: string | undefined,
  keySource: string,
): void {
  for (const [name, value] of Object.entries(headers)) {
    const field = `providers.${provider}.headers.${JSON.stringify(name)}`;
    if (!TOKEN.test(name)) throw new ConfigError(`${field}: not a valid HTTP header name`);
    if (FRAMING.has(name.toLowerCase())) throw new ConfigError(`${field}: axe sets this header itself`);
    if (NOT_FIELD_CHAR.test(value)) {
      throw new ConfigError(`${field}: the value holds a line break or another control character`);
    }
  }
  if (apiKey !== undefined && NOT_FIELD_CHAR.test(apiKey)) {
    throw new ConfigError(`${keySource}: the API key holds a line break or another control character`);
  }
}

/** `my-vllm` → `MY_VLLM`: the env-var spelling of a provider name. */
function envName(providerName: string): string {
  return providerName.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/**
 * Everything needed to talk to one provider, env > config.toml > built-in default:
 * key from `<NAME>_API_KEY` (then `api_key`), base URL from `AXE_<NAME>_BASE_URL` (then `base_url`).
 * A provider that is neither built in nor a `[providers.<name>]` table with `base_url` and `api`
 * is a RuntimeError (exit 1, as in Go axe) that names the fix.
 */
export function resolveProviderSettings(
  config: GlobalConfig,
  providerName: string,
  env: NodeJS.ProcessEnv,
): ProviderSettings {
  const canonical = own(ALIASES, providerName) ?? providerName;
  const builtin = own(BUILTIN_PROVIDERS, canonical);
  // Every name of the provider, the one used first: `gemini/…` and `google/…` (the `pro` and
  // `flash` aliases) read the same `[providers.gemini]` or `[providers.google]` and base URL.
  const names = [
    ...new Set([providerName, canonical, ...Object.keys(ALIASES).filter((a) => ALIASES[a] === canonical)]),
  ];
  const table: ProviderConfig =
    names.map((name) => own(config.providers, name)).find((found) => found !== undefined) ?? {};
  const keyEnv = builtin?.apiKeyEnv ?? `${envName(providerName)}_API_KEY`;
  const baseUrlEnv =
    names.map((name) => `AXE_${envName(name)}_BASE_URL`).find((variable) => env[variable]) ??
    `AXE_${envName(providerName)}_BASE_URL`;
  const api = table.api ?? builtin?.api;
  const aws = api === 'bedrock' ? awsSettings(providerName, table, env) : undefined;
  const regional = aws?.region ? `https://bedrock-runtime.${aws.region}.amazonaws.com` : undefined;
  // A Bedrock provider without a region has no base URL yet: its request says which setting is missing.
  const baseUrl = env[baseUrlEnv] || table.base_url || regional || builtin?.baseUrl;
  if (baseUrl === undefined || !api) {
    const known = [...Object.keys(BUILTIN_PROVIDERS), ...Object.keys(ALIASES)].join(', ');
    // Go axe's words and exit code (1): its provider factory refuses the name at run time.
    throw new RuntimeError(
      `unsupported provider "${providerName}": use one of ${known}, or add [providers.${providerName}] with base_url and api = "openai" | "anthropic" | "ollama" | "google" | "responses" to config.toml`,
    );
  }
  const apiKey = env[keyEnv] || table.api_key || undefined;
  const apiKeySource = env[keyEnv] ? 'env' : 'config';
  const headers: Record<string, string> = { ...table.headers };
  if (table.http_referer) headers['HTTP-Referer'] = table.http_referer;
  if (table.app_title) headers['X-Title'] = table.app_title;
  if (canonical === 'openrouter') Object.assign(headers, openRouterAttribution(table, env));
  checkSendable(
    providerName,
    headers,
    apiKey,
    apiKeySource === 'env' ? keyEnv : `providers.${providerName}.api_key`,
  );
  return {
    name: providerName,
    api,
    baseUrl: trimSlash(baseUrl),
    ...(apiKey ? { apiKey, apiKeySource } : {}),
    apiKeyEnv: keyEnv,
    baseUrlEnv,
    apiKeyRequired: builtin?.apiKeyRequired ?? false,
    headers,
    ...(aws ? { aws } : {}),
  };
}
