import { anthropicWire } from './anthropic.js';
import { bedrockWire } from './bedrock.js';
import { createWireProvider, type SendOptions } from './client.js';
import { googleWire } from './google.js';
import { ollamaWire } from './ollama.js';
import { openaiWire } from './openai.js';
import { openCodeRoute } from './opencode-route.js';
import { responsesWire } from './responses.js';
import type { Provider, ProviderSettings, WireApi } from './types.js';
import type { Wire } from './wire.js';

export { createHttpPool, type HttpPool } from '../http/pool.js';
export { keyMissing, type SendOptions } from './client.js';

/** Every wire format by its `api` name. */
export const WIRES: Record<WireApi, Wire> = {
  anthropic: anthropicWire,
  openai: openaiWire,
  ollama: ollamaWire,
  google: googleWire,
  responses: responsesWire,
  bedrock: bedrockWire,
};

/**
 * A provider for `settings`. Construction never fails and sends nothing: a missing required API
 * key is reported by `chat` as a ConfigError (exit 2), so a run that makes no provider call
 * (`--replay`) needs no key.
 */
export function createProvider(settings: ProviderSettings, options: SendOptions): Provider {
  if (settings.api !== 'opencode') return createWireProvider(settings, WIRES[settings.api], options);
  const byWire = new Map<WireApi, Provider>();
  return {
    name: settings.name,
    chat: (request, chatOptions) => {
      const { api, baseUrl } = openCodeRoute(request.model, settings.baseUrl);
      let provider = byWire.get(api);
      if (!provider) {
        provider = createWireProvider({ ...settings, api, baseUrl }, WIRES[api], options);
        byWire.set(api, provider);
      }
      return provider.chat(request, chatOptions);
    },
  };
}
