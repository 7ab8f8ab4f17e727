import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { REPO_ROOT, runAxe, TempHome } from '../run/cli.js';
import { LOCALHOST_CERT, startTlsAnthropic } from './tls-anthropic.js';

/**
 * A model call goes through axe's own HTTP/1.1 client on `node:net`: undici (whose WebAssembly
 * parser costs a compile at start-up and a wait at exit) is left to the tools that need it,
 * `node:http` is never loaded, `node:tls` only for an https:// base URL, `node:crypto` only for a
 * cassette or a Bedrock signature. A preload script lists, at exit, the undici files in the
 * CommonJS cache and which of those built-in modules were loaded.
 */
let fake: FakeLlm;
let home: TempHome;
let preload: string;

beforeAll(async () => {
  fake = await startFakeLlm();
  home = new TempHome();
  home.agent('a', agentToml('a', { model: 'anthropic/claude-test' }));
  home.agent('g', agentToml('g', { extra: ['tools = ["grep_files"]'] }));
  preload = home.file(
    'list-undici.cjs',
    `const Module = require('node:module');
process.on('exit', () => {
  const files = Object.keys(Module._cache).filter((f) => f.includes('/node_modules/undici/'));
  const http = process.moduleLoadList.includes('NativeModule http');
  const https = process.moduleLoadList.includes('NativeModule https');
  const tls = process.moduleLoadList.includes('NativeModule tls');
  const crypto = process.moduleLoadList.includes('NativeModule crypto');
  // V8's linear-time regexp engine, a flag grep_files sets.
  let linear = true;
  try { new RegExp('a', 'l'); } catch { linear = false; }
  require('node:fs').writeFileSync(process.env.UNDICI_LOG, JSON.stringify({ files, http, https, tls, crypto, linear }));
});
`,
  );
});

afterAll(async () => {
  await fake.close();
  home.cleanup();
});

interface Loaded {
  files: string[];
  http: boolean;
  https: boolean;
  tls: boolean;
  crypto: boolean;
  linear: boolean;
}

async function loadedBy(
  args: string[],
  fakeUrl?: string,
  extraEnv: Record<string, string> = {},
): Promise<Loaded & { stdout: string }> {
  const log = path.join(home.root, `undici-${args.length}-${Object.keys(extraEnv).length}.json`);
  writeFileSync(log, '{}');
  const env = home.env(fakeUrl, { NODE_OPTIONS: `--require ${preload}`, UNDICI_LOG: log, ...extraEnv });
  const result = await runAxe(args, { env, stdin: 'hello' });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const loaded = JSON.parse(readFileSync(log, 'utf8')) as Loaded;
  return { ...loaded, stdout: result.stdout };
}

describe('what the built axe loads to call a model', () => {
  it('a provider call over http:// (recorded, as every run) loads neither undici, node:http(s), node:tls nor node:crypto', async () => {
    fake.respond(() => ({ text: 'answer from the fake' }));
    const { files, http, https, tls, crypto, stdout } = await loadedBy(
      ['run', 'a', '--agents-dir', home.agentsDir],
      fake.url,
    );
    expect(stdout).toBe('answer from the fake');
    expect(files).toEqual([]);
    expect(http).toBe(false);
    expect(https).toBe(false);
    expect(tls).toBe(false);
    expect(crypto).toBe(false);
  });

  it('over https:// the same client works through node:tls (a local TLS server, its own certificate)', async () => {
    const { server, url } = await startTlsAnthropic('over TLS');
    try {
      const { files, http, https, tls, stdout } = await loadedBy(
        ['run', 'a', '--agents-dir', home.agentsDir],
        url,
        {
          NODE_EXTRA_CA_CERTS: LOCALHOST_CERT,
        },
      );
      expect(stdout).toBe('over TLS');
      expect(files).toEqual([]);
      expect(tls).toBe(true);
      expect(http || https).toBe(false);
    } finally {
      server.close();
    }
  });

  it('a replayed run sends nothing and loads no undici at all', async () => {
    const examples = path.join(REPO_ROOT, 'agents/examples');
    const { files, crypto } = await loadedBy([
      'run',
      'team-lead',
      '--agents-dir',
      examples,
      '--replay',
      path.join(examples, 'review.cassette.jsonl'),
      '-p',
      readFileSync(path.join(examples, 'sample.diff'), 'utf8'),
    ]);
    expect(files).toEqual([]);
    // The cassette hashes requests: node:crypto is loaded for it.
    expect(crypto).toBe(true);
  });

  it('V8 flags are left alone until grep_files runs (a flag makes Node compile later built-ins without their code cache)', async () => {
    fake.respond(() => ({ text: 'no grep' }));
    const quiet = await loadedBy(['run', 'g', '--agents-dir', home.agentsDir], fake.url);
    expect(quiet).toMatchObject({ stdout: 'no grep', linear: false });
    fake.reset();
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'grep_files', arguments: { pattern: 'a+b' } }] }
        : { text: 'grepped' },
    );
    const grepped = await loadedBy(['run', 'g', '--agents-dir', home.agentsDir], fake.url);
    expect(grepped).toMatchObject({ stdout: 'grepped', linear: true });
  });

  it('a run that switched the linear engine on writes no code cache (V8 would refuse it in runs without it)', async () => {
    const cacheHome = path.join(home.root, 'grep-cache');
    const codeCache = path.join(cacheHome, 'axe', 'code-cache');
    const grepThenAnswer = () => {
      fake.reset();
      fake.respond((request) =>
        request.toolResults.length === 0
          ? { toolCalls: [{ name: 'grep_files', arguments: { pattern: 'a+b' } }] }
          : { text: 'grepped' },
      );
    };
    grepThenAnswer();
    const env = { XDG_CACHE_HOME: cacheHome };
    expect(await loadedBy(['run', 'g', '--agents-dir', home.agentsDir], fake.url, env)).toMatchObject({
      linear: true,
    });
    expect(existsSync(codeCache) ? readdirSync(codeCache) : []).toEqual([]);
    fake.reset();
    fake.respond(() => ({ text: 'no grep' }));
    await loadedBy(['run', 'g', '--agents-dir', home.agentsDir], fake.url, env);
    const [made] = readdirSync(codeCache);
    const { ino } = statSync(path.join(codeCache, made ?? ''));
    // Used as it is by the next runs, one that greps included.
    grepThenAnswer();
    await loadedBy(['run', 'g', '--agents-dir', home.agentsDir], fake.url, env);
    expect(statSync(path.join(codeCache, made ?? '')).ino).toBe(ino);
  });
});
