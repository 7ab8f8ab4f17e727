import { chmodSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadGlobalConfig } from '../../internal/config/global.js';
import { resolveProviderSettings } from '../../internal/config/providers.js';
import { ConfigError, RuntimeError } from '../../internal/errors.js';
import { tempDir } from '../agent/helpers.js';

const empty = { providers: {} };

describe('loadGlobalConfig', () => {
  it('treats a missing config.toml as an empty config', async () => {
    expect(await loadGlobalConfig(tempDir())).toEqual(empty);
  });

  it('reads [providers.<name>] tables, including Go axe ones', async () => {
    const dir = tempDir({
      'config.toml': `[providers.anthropic]\napi_key = "sk-file"\nbase_url = "http://127.0.0.1:9/"\n\n[providers.bedrock]\nregion = "us-east-1"\n`,
    });
    const config = await loadGlobalConfig(dir);
    expect(config.providers.anthropic).toEqual({ api_key: 'sk-file', base_url: 'http://127.0.0.1:9/' });
    expect(config.providers.bedrock).toEqual({ region: 'us-east-1' });
  });

  it('never prints a URL password or a raw control character in its errors and warnings', async () => {
    const bad = tempDir({
      'config.toml': '[providers.anthropic]\nbase_url = "ftp://user:supersecretpw@x"\n',
    });
    const error = await loadGlobalConfig(bad).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain('(got "ftp://***@x/")');
    expect((error as Error).message).not.toContain('supersecretpw');
    const odd = tempDir({ 'config.toml': '"\\u001b[2Jx\\ny" = 1\n' });
    const [warning] = (await loadGlobalConfig(odd)).warnings ?? [];
    expect(warning).toContain('\\u001b[2Jx\\u000ay: unknown field');
    expect(warning).not.toMatch(/\p{Cc}/u);
  });

  it("loads Go axe's scaffolded config.toml uncommented: empty strings mean the defaults", async () => {
    const dir = tempDir({
      'config.toml':
        '[providers.anthropic]\napi_key = ""\nbase_url = ""\n[providers.ollama]\nbase_url = "http://localhost:11434"\n',
    });
    const settings = resolveProviderSettings(await loadGlobalConfig(dir), 'anthropic', {});
    expect(settings).toMatchObject({ baseUrl: 'https://api.anthropic.com' });
    expect(settings.apiKey).toBeUndefined();
    const bad = tempDir({ 'config.toml': '[providers.openai]\nbase_url = "api.openai.com"\n' });
    await expect(loadGlobalConfig(bad)).rejects.toThrow(
      /config\.toml:2:1: providers\.openai\.base_url: must be empty or an http:\/\/ or https:\/\/ URL with a host \(got "api\.openai\.com"\)$/,
    );
  });

  it('names file, line and column of a TOML syntax error', async () => {
    const dir = tempDir({ 'config.toml': '[providers.openai]\napi_key = \n' });
    await expect(loadGlobalConfig(dir)).rejects.toThrow(/config\.toml:2:\d+: /);
  });

  it('never echoes a key or a header value, even of the wrong type', async () => {
    const dir = tempDir({
      'config.toml': '[providers.openai]\napi_key = 1234567\n',
    });
    const message = await loadGlobalConfig(dir).then(String, (error: Error) => error.message);
    expect(message).toMatch(
      /config\.toml:2:1: providers\.openai\.api_key: must be a string \(got a number\)$/,
    );
    const headers = tempDir({ 'config.toml': '[providers.x]\nheaders = { A = 7654321 }\n' });
    const other = await loadGlobalConfig(headers).then(String, (error: Error) => error.message);
    expect(other).toMatch(/providers\.x\.headers\.A: must be a string \(got a number\)$/);
  });

  it('ignores an unknown key as Go axe does, with a warning and a did-you-mean', async () => {
    const dir = tempDir({ 'config.toml': '[providers.openai]\napikey = "x"\nbase_url = "http://h/v1"\n' });
    const config = await loadGlobalConfig(dir);
    expect(config.providers.openai).toEqual({ base_url: 'http://h/v1' });
    expect(config.warnings).toEqual([
      expect.stringMatching(
        /config\.toml:2:1: providers\.openai\.apikey: unknown field, ignored \(did you mean "api_key"\?\)$/,
      ),
    ]);
  });

  it('rejects invalid UTF-8 and unreadable files as config errors', async () => {
    const dir = tempDir({ 'config.toml': new Uint8Array([0x61, 0x3d, 0x22, 0xff, 0x22]) });
    await expect(loadGlobalConfig(dir)).rejects.toThrow(
      /config\.toml:1:4: not valid UTF-8 \(first bad byte 0xff at offset 3\)/,
    );
    const locked = tempDir({ 'config.toml': 'x = 1' });
    chmodSync(`${locked}/config.toml`, 0);
    if (process.getuid?.() !== 0) await expect(loadGlobalConfig(locked)).rejects.toBeInstanceOf(ConfigError);
    const directory = tempDir({ 'config.toml/x': '' });
    await expect(loadGlobalConfig(directory)).rejects.toThrow(
      /config\.toml: is a directory, not a regular file$/,
    );
  });
});

describe('resolveProviderSettings', () => {
  it('gives the built-in defaults with no config and no env', () => {
    const anthropic = resolveProviderSettings(empty, 'anthropic', {});
    expect(anthropic).toEqual({
      name: 'anthropic',
      api: 'anthropic',
      baseUrl: 'https://api.anthropic.com',
      apiKeyEnv: 'ANTHROPIC_API_KEY',
      baseUrlEnv: 'AXE_ANTHROPIC_BASE_URL',
      apiKeyRequired: true,
      headers: {},
    });
    expect(resolveProviderSettings(empty, 'openai', {}).baseUrl).toBe('https://api.openai.com/v1');
    expect(resolveProviderSettings(empty, 'ollama', {})).toMatchObject({
      api: 'ollama',
      baseUrl: 'http://localhost:11434',
      apiKeyRequired: false,
    });
    expect(resolveProviderSettings(empty, 'google', {})).toMatchObject({
      api: 'google',
      apiKeyEnv: 'GEMINI_API_KEY',
    });
    expect(resolveProviderSettings(empty, 'gemini', {})).toMatchObject({
      api: 'google',
      apiKeyEnv: 'GEMINI_API_KEY',
    });
    expect(resolveProviderSettings(empty, 'openrouter', {})).toMatchObject({
      api: 'openai',
      baseUrl: 'https://openrouter.ai/api/v1',
      apiKeyEnv: 'OPENROUTER_API_KEY',
    });
    // Go axe's MiniMax: the Anthropic wire at MiniMax's endpoint, its key required.
    expect(resolveProviderSettings(empty, 'minimax', { MINIMAX_API_KEY: 'mm-key' })).toMatchObject({
      api: 'anthropic',
      baseUrl: 'https://api.minimax.io/anthropic',
      apiKey: 'mm-key',
      apiKeyEnv: 'MINIMAX_API_KEY',
      apiKeyRequired: true,
    });
  });

  it("takes Bedrock's region in Go axe's order: AWS_REGION, AWS_DEFAULT_REGION, AXE_BEDROCK_REGION, config.toml", () => {
    const config = { providers: { bedrock: { region: 'eu-west-1' } } };
    const region = (env: NodeJS.ProcessEnv) => resolveProviderSettings(config, 'bedrock', env).aws?.region;
    expect(region({})).toBe('eu-west-1');
    expect(region({ AXE_BEDROCK_REGION: 'us-east-2' })).toBe('us-east-2');
    expect(region({ AXE_BEDROCK_REGION: 'us-east-2', AWS_DEFAULT_REGION: 'us-west-2' })).toBe('us-west-2');
    expect(region({ AWS_DEFAULT_REGION: 'us-west-2', AWS_REGION: 'ap-south-1' })).toBe('ap-south-1');
    expect(
      resolveProviderSettings({ providers: {} }, 'bedrock', { AXE_BEDROCK_REGION: 'us-east-2' }).aws?.region,
    ).toBe('us-east-2');
  });

  it('refuses a header or key no request can carry, naming where it came from (exit 2)', () => {
    const settings =
      (headers: Record<string, string>, env: NodeJS.ProcessEnv = {}, api_key?: string) =>
      () =>
        resolveProviderSettings(
          { providers: { anthropic: { headers, ...(api_key ? { api_key } : {}) } } },
          'anthropic',
          env,
        );
    expect(settings({ 'X Bad': 'v' })).toThrow(
      new ConfigError('providers.anthropic.headers."X Bad": not a valid HTTP header name'),
    );
    expect(settings({ 'Content-Length': '1' })).toThrow(
      new ConfigError('providers.anthropic.headers."Content-Length": axe sets this header itself'),
    );
    expect(settings({ 'X-Team': 'a\r\nInjected: yes' })).toThrow(
      /headers\."X-Team": the value holds a line break/,
    );
    expect(settings({}, { ANTHROPIC_API_KEY: 'sk-ant-123456789\n' })).toThrow(
      new ConfigError('ANTHROPIC_API_KEY: the API key holds a line break or another control character'),
    );
    expect(settings({}, {}, 'sk-ant-123456789\n')).toThrow(
      /^providers\.anthropic\.api_key: the API key holds/,
    );
    expect(settings({ 'X-Team': 'platform', Host: 'gw.example' })()).toMatchObject({
      headers: { 'X-Team': 'platform' },
    });
  });

  it("gemini and google are one provider: either name reads the other's table and base URL", () => {
    const gemini = {
      providers: { gemini: { api_key: 'from-gemini-table', base_url: 'http://gw.example/g' } },
    };
    expect(resolveProviderSettings(gemini, 'google', {})).toMatchObject({
      apiKey: 'from-gemini-table',
      baseUrl: 'http://gw.example/g',
    });
    const google = { providers: { google: { base_url: 'http://gw.example/google' } } };
    expect(resolveProviderSettings(google, 'gemini', {}).baseUrl).toBe('http://gw.example/google');
    expect(
      resolveProviderSettings(empty, 'google', { AXE_GEMINI_BASE_URL: 'http://127.0.0.1:9' }),
    ).toMatchObject({
      baseUrl: 'http://127.0.0.1:9',
      baseUrlEnv: 'AXE_GEMINI_BASE_URL',
    });
    expect(
      resolveProviderSettings(empty, 'gemini', { AXE_GOOGLE_BASE_URL: 'http://127.0.0.1:8' }).baseUrl,
    ).toBe('http://127.0.0.1:8');
  });

  it('takes env over config.toml over defaults, for the key and the base URL', () => {
    const config = { providers: { openai: { api_key: 'from-file', base_url: 'http://file.example/v1' } } };
    expect(resolveProviderSettings(config, 'openai', {})).toMatchObject({
      apiKey: 'from-file',
      baseUrl: 'http://file.example/v1',
    });
    const env = { OPENAI_API_KEY: 'from-env', AXE_OPENAI_BASE_URL: 'http://127.0.0.1:1234/v1/' };
    expect(resolveProviderSettings(config, 'openai', env)).toMatchObject({
      apiKey: 'from-env',
      baseUrl: 'http://127.0.0.1:1234/v1',
    });
  });

  it("takes Go axe's OpenRouter referer / title / categories, env first, for OpenRouter only", () => {
    const table = { referer: 'https://file.example', title: 'from-file', categories: 'cli-agent' };
    expect(resolveProviderSettings({ providers: { openrouter: table } }, 'openrouter', {}).headers).toEqual({
      'HTTP-Referer': 'https://file.example',
      'X-OpenRouter-Title': 'from-file',
      'X-OpenRouter-Categories': 'cli-agent',
    });
    const env = { AXE_OPENROUTER_TITLE: 'from-env', AXE_OPENROUTER_REFERER: 'https://env.example' };
    expect(resolveProviderSettings({ providers: { openrouter: table } }, 'openrouter', env).headers).toEqual({
      'HTTP-Referer': 'https://env.example',
      'X-OpenRouter-Title': 'from-env',
      'X-OpenRouter-Categories': 'cli-agent',
    });
    expect(resolveProviderSettings({ providers: { openai: table } }, 'openai', env).headers).toEqual({});
  });

  it('turns OpenRouter attribution settings into headers', () => {
    const config = { providers: { openrouter: { http_referer: 'https://me.example', app_title: 'axe-ci' } } };
    expect(resolveProviderSettings(config, 'openrouter', {}).headers).toEqual({
      'HTTP-Referer': 'https://me.example',
      'X-Title': 'axe-ci',
    });
  });

  it('resolves a custom provider table, with its key from <NAME>_API_KEY and its URL from AXE_<NAME>_BASE_URL', () => {
    const config = {
      providers: { 'my-vllm': { base_url: 'http://127.0.0.1:8000/v1', api: 'openai' as const } },
    };
    expect(resolveProviderSettings(config, 'my-vllm', {})).toEqual({
      name: 'my-vllm',
      api: 'openai',
      baseUrl: 'http://127.0.0.1:8000/v1',
      apiKeyEnv: 'MY_VLLM_API_KEY',
      baseUrlEnv: 'AXE_MY_VLLM_BASE_URL',
      apiKeyRequired: false,
      headers: {},
    });
    const env = { MY_VLLM_API_KEY: 'k', AXE_MY_VLLM_BASE_URL: 'http://127.0.0.1:9/v1' };
    expect(resolveProviderSettings(config, 'my-vllm', env)).toMatchObject({
      apiKey: 'k',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
  });

  it('rejects an unknown provider, naming it and the fix', () => {
    expect(() => resolveProviderSettings(empty, 'mistery', {})).toThrow(RuntimeError);
    expect(() => resolveProviderSettings(empty, 'mistery', {})).toThrow(
      /unsupported provider "mistery".*\[providers\.mistery\] with base_url and api/,
    );
    const noApi = { providers: { half: { base_url: 'http://127.0.0.1:1' } } };
    expect(() => resolveProviderSettings(noApi, 'half', {})).toThrow(/unsupported provider "half"/);
  });
});
