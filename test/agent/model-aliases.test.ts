import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { MODEL_ALIASES, parseModelRef } from '../../internal/agent/model.js';

// The aliases are checked against the official SDKs installed as dev dependencies: when an SDK
// update brings a newer model (or retires one an alias names), this test says which alias to move.
const sdk = path.resolve('node_modules/@anthropic-ai/sdk');
const declarations = readFileSync(path.join(sdk, 'resources/messages/messages.d.ts'), 'utf8');
const modelUnion = /export type Model = ([^;]+);/.exec(declarations)?.[1] ?? '';
const anthropicModels = [...modelUnion.matchAll(/'([^']+)'/g)].map((m) => m[1] ?? '');
const { DEPRECATED_MODELS } = createRequire(import.meta.url)(
  path.join(sdk, 'internal/data/deprecated-models.js'),
) as { DEPRECATED_MODELS: Record<string, string> };

/** The newest undated `claude-<family>-<major>[-<minor>]` in the SDK's `Model` type. */
function newest(family: string): string | undefined {
  const versioned = anthropicModels.flatMap((id) => {
    const m = new RegExp(`^claude-${family}-(\\d+)(?:-(\\d))?$`).exec(id);
    return m ? [{ id, version: Number(m[1]) * 100 + Number(m[2] ?? 0) }] : [];
  });
  return versioned.sort((a, b) => b.version - a.version)[0]?.id;
}

describe('model aliases', () => {
  it('read the SDK model list', () => {
    expect(anthropicModels.length).toBeGreaterThan(5);
  });

  it.each(['sonnet', 'opus', 'haiku'])(
    '%s names the newest model of its family, not a deprecated one',
    (alias) => {
      const target = MODEL_ALIASES[alias];
      expect(target).toBe(`anthropic/${newest(alias)}`);
      expect(Object.keys(DEPRECATED_MODELS)).not.toContain(target?.split('/')[1]);
    },
  );

  it("fable: Claude Code's Fable alias, a Fable model (the SDK may list the newest one later)", () => {
    expect(parseModelRef('fable')).toEqual({ provider: 'anthropic', model: 'claude-fable-5-2' });
    const fables = anthropicModels.filter((id) => /^claude-fable-\d/.test(id));
    expect(fables.length).toBeGreaterThan(0);
    expect(Object.keys(DEPRECATED_MODELS)).not.toContain('claude-fable-5-2');
  });

  it("maps gemini-cli's aliases to the Gemini API's -latest aliases", () => {
    expect(parseModelRef('flash')).toEqual({ provider: 'google', model: 'gemini-flash-latest' });
    expect(parseModelRef('flash-lite')).toEqual({ provider: 'google', model: 'gemini-flash-lite-latest' });
    expect(parseModelRef('pro')).toEqual({ provider: 'google', model: 'gemini-pro-latest' });
    const genai = readFileSync(path.resolve('node_modules/@google/genai/dist/genai.d.ts'), 'utf8');
    expect(genai).toContain("'gemini-flash-latest'");
    expect(genai).toContain("'gemini-flash-lite-latest'");
  });

  it('every alias expands to provider/model', () => {
    for (const [alias, target] of Object.entries(MODEL_ALIASES)) {
      expect(parseModelRef(alias)).toEqual({
        provider: target.split('/')[0],
        model: target.split('/').slice(1).join('/'),
      });
    }
  });
});
