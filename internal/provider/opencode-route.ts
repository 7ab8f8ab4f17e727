import type { WireApi } from './types.js';
import { trimSlash } from './wire.js';

/**
 * OpenCode Zen (Go axe's `opencode`): one key and base URL, three APIs behind it — `claude-*` on
 * the Anthropic Messages API (`{base}/v1/messages`), `gpt-*` on the OpenAI Responses API
 * (`{base}/v1/responses`), every other model on Chat Completions (`{base}/v1/chat/completions`).
 */
export function openCodeRoute(model: string, baseUrl: string): { api: WireApi; baseUrl: string } {
  if (model.startsWith('claude-')) return { api: 'anthropic', baseUrl };
  return { api: model.startsWith('gpt-') ? 'responses' : 'openai', baseUrl: `${trimSlash(baseUrl)}/v1` };
}
