import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { loadGlobalConfig } from '../../internal/config/global.js';
import { withOverrides } from '../../internal/delegation/child.js';
import { createHttpPool } from '../../internal/provider/index.js';
import { liveProviders } from '../../internal/runner/providers.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

async function agents(...files: [string, string][]) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'axe-providers-'));
  dirs.push(root);
  for (const [name, body] of files) fs.writeFileSync(path.join(root, `${name}.toml`), body);
  const env = { ANTHROPIC_API_KEY: 'test-key', AXE_ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' };
  const load = (name: string) => loadAgent(name, { searchDirs: [root], env });
  return { root, env, load };
}

describe("a run's providers", () => {
  it('are made once per provider name and retry policy: a fan-out of one agent shares one', async () => {
    const { root, env, load } = await agents(
      ['w', 'name = "w"\nmodel = "anthropic/claude-test"\n'],
      ['r', 'name = "r"\nmodel = "anthropic/claude-test"\n[retry]\nmax_retries = 1\n'],
    );
    const pool = createHttpPool();
    const providers = liveProviders({ globalConfig: await loadGlobalConfig(root), env, pool });
    const w = await load('w');
    const r = await load('r');
    const model = { provider: 'anthropic', model: 'claude-test' };
    const first = providers.forAgent(model, w, 'w#1').provider;
    expect(providers.forAgent(model, w, 'w#2').provider).toBe(first);
    expect(providers.forAgent(model, r, 'r#1').provider).not.toBe(first);
    await pool.close();
  });

  it('a provider name that cannot be resolved fails every agent that asks for it', async () => {
    const { root, env, load } = await agents(['w', 'name = "w"\nmodel = "anthropic/claude-test"\n']);
    const pool = createHttpPool();
    const providers = liveProviders({ globalConfig: await loadGlobalConfig(root), env, pool });
    const w = await load('w');
    const nowhere = { provider: 'nowhere', model: 'm' };
    expect(() => providers.forAgent(nowhere, w, 'w#1')).toThrow(/unsupported provider "nowhere"/);
    expect(() => providers.forAgent(nowhere, w, 'w#2')).toThrow(/unsupported provider "nowhere"/);
    await pool.close();
  });
});

describe('withOverrides', () => {
  it('a call that overrides nothing runs the agent file as loaded; one that does gets a copy', async () => {
    const { env, load } = await agents(['w', 'name = "w"\nmodel = "anthropic/claude-test"\n']);
    const w = await load('w');
    expect(withOverrides(w, {}, {}, 'call_agent')).toEqual({ spec: w });
    expect((withOverrides(w, {}, {}, 'call_agent') as { spec: unknown }).spec).toBe(w);
    const chosen = withOverrides(w, { model: 'openai/gpt-test' }, env, 'call_agent');
    expect(chosen).toEqual({ spec: { ...w, model: { provider: 'openai', model: 'gpt-test' } } });
    expect(w.model).toEqual({ provider: 'anthropic', model: 'claude-test' });
  });
});
