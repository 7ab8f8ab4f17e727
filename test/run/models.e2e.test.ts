import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { e2eHomes, runAxe } from './cli.js';

/** `axe models`: the providers, where each one's key comes from (never the key), the aliases, the default. */
const setup = e2eHomes();

describe.concurrent('axe models', () => {
  it('lists every provider with its key source, the aliases and the default model; --json the same', async () => {
    const { home } = await setup();
    writeFileSync(
      path.join(home.configDir, 'config.toml'),
      [
        '[defaults]',
        'model = "my-vllm/qwen"',
        '[providers.my-vllm]',
        'base_url = "http://127.0.0.1:8000/v1"',
        'api = "openai"',
        '[providers.anthropic]',
        'api_key = "sk-ant-from-config"',
        '',
      ].join('\n'),
      { mode: 0o600 },
    );
    const env = home.env(undefined, { OPENAI_API_KEY: 'sk-openai-secret' });
    const text = await runAxe(['models'], { env });
    expect(text).toMatchObject({ code: 0, stderr: '' });
    expect(text.stdout).toMatch(
      /^ {2}openai +openai +https:\/\/api\.openai\.com\/v1 +key: OPENAI_API_KEY \(set\)$/m,
    );
    expect(text.stdout).toMatch(/^ {2}anthropic +.*key: config\.toml providers\.anthropic\.api_key$/m);
    expect(text.stdout).toMatch(/^ {2}openrouter +.*key: not set \(OPENROUTER_API_KEY\)$/m);
    expect(text.stdout).toMatch(/^ {2}google \(gemini\) +google/m);
    expect(text.stdout).toMatch(/^ {2}my-vllm +openai +http:\/\/127\.0\.0\.1:8000\/v1 +key: none needed/m);
    expect(text.stdout).toMatch(/^ {2}sonnet +anthropic\/claude-/m);
    expect(text.stdout).toContain('Default model: my-vllm/qwen (config.toml [defaults] model)');
    expect(text.stdout).not.toContain('sk-openai-secret');
    expect(text.stdout).not.toContain('sk-ant-from-config');

    const json = await runAxe(['models', '--json'], { env });
    expect(json.code).toBe(0);
    const listed = JSON.parse(json.stdout);
    expect(listed.default_model).toBe('my-vllm/qwen');
    expect(listed.aliases.haiku).toMatch(/^anthropic\//);
    const byName = Object.fromEntries(
      (listed.providers as { name: string }[]).map((provider) => [provider.name, provider]),
    );
    expect(byName.openai).toMatchObject({
      key_source: 'env',
      key_variable: 'OPENAI_API_KEY',
      key_missing: false,
    });
    expect(byName.anthropic).toMatchObject({ key_source: 'config', key_missing: false });
    expect(byName.openrouter).toMatchObject({ key_source: 'none', key_missing: true });
    expect(byName['my-vllm']).toMatchObject({ api: 'openai', key_missing: false });
    expect(json.stdout).not.toContain('sk-');
  });
});
