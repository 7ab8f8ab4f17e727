import { chmodSync } from 'node:fs';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm, RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { runAxe, TempHome } from '../run/cli.js';
import { listen, shut } from './local-server.js';

/**
 * Every provider as a user reaches it: the built binary, a model string, keys and base URLs from
 * the environment or config.toml, against the fake server (which rejects malformed requests).
 */
let fake: FakeLlm;
let home: TempHome;

beforeAll(async () => {
  fake = await startFakeLlm();
  home = new TempHome();
  home.file('work/notes.txt', 'remember the milk');
  const config = home.file(
    'config/axe/config.toml',
    [
      '[providers.lmstudio]',
      `base_url = "${fake.url}/v1"`,
      'api = "openai"',
      '',
      '[providers.minimax]',
      `base_url = "${fake.url}"`,
      'api = "anthropic"',
      'api_key = "mm-file-key"',
      '',
      '[providers.gpu-box]',
      `base_url = "${fake.url}"`,
      'api = "ollama"',
      '',
    ].join('\n'),
  );
  chmodSync(config, 0o600); // it holds a key (axe warns otherwise)
});

afterAll(async () => {
  await fake.close();
  home.cleanup();
});

const env = (extra: Record<string, string> = {}) =>
  home.env(fake.url, {
    AXE_OPENROUTER_BASE_URL: `${fake.url}/v1`,
    OPENROUTER_API_KEY: 'or-key',
    AXE_GOOGLE_BASE_URL: fake.url,
    AXE_GEMINI_BASE_URL: fake.url,
    GEMINI_API_KEY: 'gm-key',
    // A custom provider's key comes from <NAME>_API_KEY (the fake, like OpenAI, requires one).
    LMSTUDIO_API_KEY: 'lm-key',
    ...extra,
  });

/** Reads notes.txt with the read_file tool, then answers with what it read. */
function reader(request: RecordedRequest): ScriptedReply {
  const result = request.toolResults[0];
  if (result === undefined) return { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
  return { text: `${request.model} read: ${result.content}` };
}

/** Each wire JSON and streamed, through built-in providers, an alias and config.toml ones. */
const MODELS: { model: string; stream: boolean; auth: [string, string] }[] = [
  { model: 'anthropic/claude-x', stream: false, auth: ['x-api-key', 'test-key'] },
  { model: 'minimax/mm-x', stream: true, auth: ['x-api-key', 'mm-file-key'] },
  { model: 'openai/gpt-x', stream: false, auth: ['authorization', 'Bearer test-key'] },
  { model: 'openrouter/meta/llama-x', stream: true, auth: ['authorization', 'Bearer or-key'] },
  { model: 'lmstudio/local-x', stream: false, auth: ['authorization', 'Bearer lm-key'] },
  { model: 'ollama/llama-x', stream: true, auth: ['authorization', ''] },
  { model: 'gpu-box/qwen-x', stream: false, auth: ['authorization', ''] },
  { model: 'google/gemini-x', stream: false, auth: ['x-goog-api-key', 'gm-key'] },
  { model: 'gemini/gemini-y', stream: true, auth: ['x-goog-api-key', 'gm-key'] },
];

const servedModel = (model: string) => model.slice(model.indexOf('/') + 1);

describe('axe run on every provider', () => {
  it('a tool turn and a final answer, JSON and streamed, pass the fake server validation', async () => {
    fake.respond(reader);
    const runs = MODELS.map(async ({ model, stream }, i) => {
      const name = `agent${i}`;
      const work = path.join(home.root, 'work');
      home.agent(
        name,
        agentToml(name, {
          model,
          extra: ['tools = ["read_file"]', `workdir = "${work}"`, `stream = ${stream}`],
        }),
      );
      const result = await runAxe(['run', name, '--agents-dir', home.agentsDir, '-p', 'go'], { env: env() });
      return { model, code: result.code, stdout: result.stdout, stderr: result.stderr };
    });
    expect(await Promise.all(runs)).toEqual(
      MODELS.map(({ model }) => ({
        model,
        code: 0,
        stdout: `${servedModel(model)} read: 1: remember the milk`,
        stderr: '',
      })),
    );
    expect(fake.rejections.map((r) => r.rejection)).toEqual([]);
    for (const { model, stream, auth } of MODELS) {
      const requests = fake.requests.filter((r) => r.model === servedModel(model));
      expect(requests.map((r) => [r.stream, r.toolResults.length])).toEqual([
        [stream, 0],
        [stream, 1],
      ]);
      const [header, value] = auth;
      for (const request of requests) expect(request.headers[header] ?? '').toBe(value);
    }
  });

  it('provider failures: one line on stderr, clean stdout, the documented exit code', async () => {
    const closed = createServer();
    const closedUrl = await listen(closed);
    await shut(closed);
    home.agent('keyless', agentToml('keyless', { model: 'gemini/gemini-x' }));
    home.agent('local', agentToml('local', { model: 'ollama/llama-x' }));
    home.agent('limited', agentToml('limited', { model: 'openai/gpt-limited' }));
    fake.respond((request) =>
      request.model === 'gpt-limited'
        ? { fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' } } }
        : reader(request),
    );
    const run = (agent: string, extra: Record<string, string>) =>
      runAxe(['run', agent, '--agents-dir', home.agentsDir, '-p', 'go', '--timeout', '1'], {
        env: { ...env(), ...extra },
      });
    const [keyless, refused, limited, schemeless] = await Promise.all([
      // At its own (remote) base URL, never reached: the missing key stops the run first. (A
      // loopback base URL, like the fake's, needs no key.)
      run('keyless', { GEMINI_API_KEY: '', AXE_GEMINI_BASE_URL: '', AXE_GOOGLE_BASE_URL: '' }),
      run('local', { AXE_OLLAMA_BASE_URL: closedUrl }),
      run('limited', {}),
      run('local', { AXE_OLLAMA_BASE_URL: 'localhost:11434' }),
    ]);
    expect(schemeless).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        'axe: invalid base URL for provider "ollama": "localhost:11434" is not an http:// or https:// URL (check AXE_OLLAMA_BASE_URL or base_url in config.toml)\n',
    });
    expect(keyless).toMatchObject({
      code: 2,
      stdout: '',
      stderr:
        'axe: API key for provider "gemini" is not configured (set GEMINI_API_KEY or add to config.toml)\n',
    });
    expect(refused).toMatchObject({
      code: 3,
      stdout: '',
      stderr: `axe: ollama: server error: connection refused: is Ollama running? (expected at ${closedUrl}) (after 1 retry)\n`,
    });
    // A 1 s wait would pass the 1 s deadline: not retried, and the message says when to retry.
    expect(limited).toMatchObject({ code: 3, stdout: '' });
    expect(limited.stderr).toMatch(
      /^axe: openai: rate limited \(HTTP 429\): Rate limit exceeded, please retry later \[request req_fake\d+\]; lower the request rate or retry in 1 s \(retries are set by \[retry\] max_retries\)\n$/,
    );
  });
});
