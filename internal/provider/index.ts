import { anthropicWire } from './anthropic.js';
import { createWireProvider } from './client.js';
import { googleWire } from './google.js';
import type { HttpPool } from './http.js';
import { ollamaWire } from './ollama.js';
import { openaiWire } from './openai.js';
import type { Provider, ProviderApi, ProviderSettings, RetryPolicy } from './types.js';
import type { Wire } from './wire.js';

export { createHttpPool, type HttpPool } from './http.js';

/** Every wire format by its `api` name. */
export const WIRES: Record<ProviderApi, Wire> = {
  anthropic: anthropicWire,
  openai: openaiWire,
  ollama: ollamaWire,
  google: googleWire,
};

/**
 * A provider for `settings`. Construction never fails and sends nothing: a missing required API
 * key is reported by `chat` as a ConfigError (exit 2), so a run that makes no provider call
 * (`--replay`) needs no key.
 */
export function createProvider(
  settings: ProviderSettings,
  options: { retry: RetryPolicy; pool: HttpPool },
): Provider {
  return createWireProvider(settings, WIRES[settings.api], options);
}
