import { describe, expect, it } from 'vitest';
import { costOf, priceFor } from '../../internal/prices/index.js';
import type { Usage } from '../../internal/provider/types.js';

const usage = (over: Partial<Usage>): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...over,
});

describe('priceFor', () => {
  it('reads the price table for each built-in provider, by the table’s own provider id', () => {
    expect(priceFor('anthropic', 'claude-sonnet-4-5', undefined)).toEqual({
      input: 3,
      output: 15,
      cacheRead: 0.3,
      cacheWrite: 3.75,
    });
    expect(priceFor('openai', 'gpt-5', undefined)).toEqual({ input: 1.25, output: 10, cacheRead: 0.125 });
    expect(priceFor('google', 'gemini-2.5-flash', undefined)?.input).toBe(0.3);
    expect(priceFor('gemini', 'gemini-2.5-flash', undefined)?.input).toBe(0.3);
    expect(priceFor('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', undefined)?.input).toBe(3.3);
    expect(priceFor('openrouter', 'anthropic/claude-sonnet-4.5', undefined)?.output).toBe(15);
    expect(priceFor('xai', 'grok-4', undefined)?.input).toBe(3);
    expect(priceFor('opencode', 'gpt-5', undefined)?.input).toBe(1.25);
  });

  it('gives no price (not zero) to a local or unknown model', () => {
    expect(priceFor('ollama', 'llama3.2', undefined)).toBeUndefined();
    expect(priceFor('ollama', 'gpt-5', undefined)).toBeUndefined();
    expect(priceFor('openai', 'no-such-model-anywhere', undefined)).toBeUndefined();
    expect(priceFor('myvllm', 'gpt-5', undefined, { baseUrl: 'http://127.0.0.1:8000/v1' })).toBeUndefined();
    expect(priceFor('lan', 'gpt-5', undefined, { baseUrl: 'http://gpubox:8000/v1' })).toBeUndefined();
    expect(priceFor('mine', 'gpt-5', undefined)).toBeUndefined();
  });

  it('prices a custom provider by its base URL’s host, or by a name the table knows', () => {
    expect(
      priceFor('fast', 'llama-3.3-70b-versatile', undefined, { baseUrl: 'https://api.groq.com/openai/v1' }),
    ).toBeDefined();
    expect(priceFor('groq', 'llama-3.3-70b-versatile', undefined)).toBeDefined();
  });

  it('lets config.toml’s [prices] win over the table and price what the table does not know', () => {
    const overrides = {
      'anthropic/claude-sonnet-4-5': { input: 1, output: 2 },
      'ollama/llama3.2': { input: 0.5, output: 0.5, cache_read: 0.05, cache_write: 0.6 },
      'google/gemini-2.5-flash': { input: 7, output: 8 },
    };
    expect(priceFor('anthropic', 'claude-sonnet-4-5', overrides)).toEqual({ input: 1, output: 2 });
    expect(priceFor('ollama', 'llama3.2', overrides)).toEqual({
      input: 0.5,
      output: 0.5,
      cacheRead: 0.05,
      cacheWrite: 0.6,
    });
    // `gemini` is `google`'s other name: one entry prices both.
    expect(priceFor('gemini', 'gemini-2.5-flash', overrides)?.input).toBe(7);
  });
});

describe('costOf', () => {
  const sonnet = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

  it('prices uncached input, cache reads, cache writes and output each at its rate', () => {
    const cost = costOf(
      usage({
        inputTokens: 1_000_000,
        cacheReadTokens: 2_000_000,
        cacheWriteTokens: 1_000_000,
        outputTokens: 100_000,
      }),
      sonnet,
    );
    expect(cost.usd).toBeCloseTo(3 + 0.6 + 3.75 + 1.5, 10);
    // Without the cache every one of the 4M input tokens is plain input.
    expect(cost.usdWithoutCache).toBeCloseTo(12 + 1.5, 10);
  });

  it('costs the same with and without caching when nothing was cached', () => {
    const cost = costOf(usage({ inputTokens: 1234, outputTokens: 56 }), sonnet);
    expect(cost.usd).toBeCloseTo((1234 * 3 + 56 * 15) / 1e6, 12);
    expect(cost.usdWithoutCache).toBe(cost.usd);
  });

  it('prices cached tokens as plain input when the price has no cache rates', () => {
    const cost = costOf(usage({ inputTokens: 10, cacheReadTokens: 90 }), { input: 1, output: 1 });
    expect(cost.usd).toBeCloseTo(100 / 1e6, 12);
    expect(cost.usdWithoutCache).toBeCloseTo(cost.usd, 12);
  });
});
