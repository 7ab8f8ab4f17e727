import { own } from '../config/own.js';
import { ConfigError } from '../errors.js';
import type { ModelRef } from './spec.js';

/**
 * Model aliases other programs' agent files use: Claude Code's (`.claude/agents/*.md`) name the
 * newest model of each family in `@anthropic-ai/sdk`'s `Model` type (`fable`: as Claude Code says); gemini-cli's map to the
 * Gemini API's own `-latest` aliases. test/agent/model-aliases.test.ts keeps them current.
 */
export const MODEL_ALIASES: Readonly<Record<string, string>> = {
  sonnet: 'anthropic/claude-sonnet-5-5',
  haiku: 'anthropic/claude-haiku-5-5',
  opus: 'anthropic/claude-opus-5-5',
  // Claude Code's docs: `fable` is Fable 5.2 on the Anthropic API (Fable 5 only through Claude apps'
  // gateway). The SDK's Model type may not list it yet, so it is not checked against the SDK.
  fable: 'anthropic/claude-fable-5-2',
  pro: 'google/gemini-pro-latest',
  flash: 'google/gemini-flash-latest',
  'flash-lite': 'google/gemini-flash-lite-latest',
};

/**
 * `provider/model` → `{ provider, model }`, split on the first `/` (so
 * `openrouter/meta-llama/llama-3.1-8b` keeps its slash). An alias expands first; `inherit` means
 * "the caller's model" and gives undefined.
 */
export function parseModelRef(text: string): ModelRef | undefined {
  const trimmed = text.trim();
  if (trimmed === 'inherit') return undefined;
  const expanded = own(MODEL_ALIASES, trimmed) ?? trimmed;
  const slash = expanded.indexOf('/');
  const provider = expanded.slice(0, slash);
  const model = expanded.slice(slash + 1);
  if (slash <= 0 || model.trim() === '' || /\s/.test(provider)) {
    throw new ConfigError(
      `invalid model format ${JSON.stringify(text)}: expected provider/model-name (e.g. "anthropic/claude-sonnet-5-5"), an alias (${Object.keys(MODEL_ALIASES).join(', ')}) or "inherit"`,
    );
  }
  return { provider, model };
}

/**
 * Model names other tools write without a provider (`claude-…`, `gemini-…`, `gpt-…`): the provider
 * they imply, or undefined.
 */
export function impliedProvider(model: string): string | undefined {
  if (/^claude-/.test(model)) return 'anthropic';
  if (/^gemini-/.test(model)) return 'google';
  if (/^(gpt-|o[1-9](-|$)|chatgpt-)/.test(model)) return 'openai';
  return undefined;
}

/** `provider/model`, as flags, events and results name a model. */
export function qualifiedModelName(model: ModelRef): string {
  return `${model.provider}/${model.model}`;
}
