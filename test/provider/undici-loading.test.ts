import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { REPO_ROOT, runAxe, TempHome } from '../run/cli.js';

/**
 * `import 'undici'` loads the whole package (fetch, WebSocket, caches: ~100 ms of CPU) at the
 * start of every run. The built binary must load only the pool and `request` it uses, and only
 * when a request is sent. A preload script lists the undici files in the CommonJS cache at exit.
 */
let fake: FakeLlm;
let home: TempHome;
let preload: string;

beforeAll(async () => {
  fake = await startFakeLlm();
  home = new TempHome();
  home.agent('a', agentToml('a', { model: 'anthropic/claude-test' }));
  preload = home.file(
    'list-undici.cjs',
    `const Module = require('node:module');
process.on('exit', () => {
  const files = Object.keys(Module._cache).filter((f) => f.includes('/node_modules/undici/'));
  require('node:fs').writeFileSync(process.env.UNDICI_LOG, JSON.stringify(files));
});
`,
  );
});

afterAll(async () => {
  await fake.close();
  home.cleanup();
});

async function undiciFilesOf(args: string[], fakeUrl?: string): Promise<{ files: string[]; stdout: string }> {
  const log = path.join(home.root, `undici-${args.length}.json`);
  writeFileSync(log, '[]');
  const env = home.env(fakeUrl, { NODE_OPTIONS: `--require ${preload}`, UNDICI_LOG: log });
  const result = await runAxe(args, { env, stdin: 'hello' });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const files = (JSON.parse(readFileSync(log, 'utf8')) as string[]).map((f) =>
    f.slice(f.indexOf('/node_modules/undici/') + '/node_modules/undici/'.length),
  );
  return { files, stdout: result.stdout };
}

describe('the built axe loads only the undici parts it uses', () => {
  it('a provider call loads the agent and request modules, not the package index (fetch, WebSocket)', async () => {
    fake.respond(() => ({ text: 'answer from the fake' }));
    const { files, stdout } = await undiciFilesOf(['run', 'a', '--agents-dir', home.agentsDir], fake.url);
    expect(stdout).toBe('answer from the fake');
    expect(files).toContain('lib/dispatcher/agent.js');
    expect(files).toContain('lib/api/api-request.js');
    expect(files).not.toContain('index.js');
    expect(files.filter((f) => f.startsWith('lib/web/'))).toEqual([]);
  });

  it('a replayed run sends nothing and loads no undici at all', async () => {
    const examples = path.join(REPO_ROOT, 'agents/examples');
    const { files } = await undiciFilesOf([
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
  });
});
