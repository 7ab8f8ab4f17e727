import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { ConfigError } from '../../internal/errors.js';
import { agentResolver, type RunContext } from '../../internal/runner/context.js';
import { resolveAgentRun } from '../../internal/runner/resolve.js';
import { detailOutput } from '../../internal/runner/result.js';
import { addSecret } from '../../internal/secrets.js';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'axe-resolve-')));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
fs.mkdirSync(path.join(root, 'agents'));
fs.mkdirSync(path.join(root, 'work'));
fs.writeFileSync(path.join(root, 'work', 'notes.md'), 'note');

async function agent(name: string, toml: string) {
  fs.writeFileSync(path.join(root, 'agents', `${name}.toml`), `name = "${name}"\n${toml}\n`);
  return loadAgent(name, { searchDirs: [path.join(root, 'agents')], env: {} });
}

describe('resolveAgentRun', () => {
  it('resolves model, workdir, prompt, files and the tools offered', async () => {
    const spec = await agent(
      'full',
      `model = "anthropic/m1"\nsystem_prompt = "Be brief."\nworkdir = "${root}/work"\nfiles = ["*.md"]\n` +
        'tools = ["read_file", "run_command"]\ndisallowed_tools = ["run_command"]\nsub_agents = ["x"]',
    );
    const resolved = await resolveAgentRun(spec, { configDir: root });
    expect(resolved).toMatchObject({
      modelName: 'anthropic/m1',
      workdir: path.join(root, 'work'),
      systemPrompt: 'Be brief.\n\n---\n\n## Context Files\n\n### notes.md\n```md\nnote\n```',
      tools: ['read_file', 'call_agent'],
      callsAgents: true,
      atMaxDepth: false,
    });
    const atLimit = await resolveAgentRun(spec, { configDir: root, depth: 3, maxDepth: 3 });
    expect(atLimit).toMatchObject({ tools: [], callsAgents: false, atMaxDepth: true });
  });

  it('applies --model and --workdir, and inherits the parent model for `inherit`', async () => {
    const spec = await agent('inheritor', `model = "inherit"\nworkdir = "${root}/work"`);
    await expect(resolveAgentRun(spec, { configDir: root })).rejects.toThrow(ConfigError);
    const inherited = await resolveAgentRun(spec, {
      configDir: root,
      inheritedModel: { provider: 'openai', model: 'gpt-x' },
    });
    expect(inherited.modelName).toBe('openai/gpt-x');
    const flagged = await resolveAgentRun(spec, {
      configDir: root,
      overrides: { model: 'ollama/llama3', workdir: root },
    });
    expect(flagged).toMatchObject({ modelName: 'ollama/llama3', workdir: root });
  });

  it('names the flag or the file in a ConfigError', async () => {
    const spec = await agent('bad', `model = "anthropic/m"\nworkdir = "${root}/nowhere"`);
    await expect(resolveAgentRun(spec, { configDir: root })).rejects.toThrow(
      `${spec.source}: workdir: not a directory: ${root}/nowhere`,
    );
    await expect(
      resolveAgentRun(spec, { configDir: root, overrides: { workdir: `${root}/gone` } }),
    ).rejects.toThrow(`--workdir: not a directory: ${root}/gone`);
    await expect(
      resolveAgentRun(spec, { configDir: root, overrides: { workdir: root, skill: 'missing' } }),
    ).rejects.toThrow(`--skill: skill "missing" not found: ${root}/skills/missing/SKILL.md`);
    await expect(
      resolveAgentRun(spec, { configDir: root, overrides: { workdir: root, model: 'nope' } }),
    ).rejects.toThrow(/^--model: invalid model format "nope"/);
  });
});

describe('agentResolver', () => {
  it('shares one resolution among runs that start while it is in flight, then starts afresh', async () => {
    const spec = await agent('shared', `model = "anthropic/m"\nworkdir = "${root}/work"`);
    const place = { configDir: root, depth: 1, maxDepth: 3, inheritedModel: undefined, overrides: {} };
    const ctx = place as unknown as RunContext;
    const resolve = agentResolver();
    const first = resolve(spec, ctx);
    expect(resolve(spec, ctx)).toBe(first);
    const deeper = resolve(spec, { ...place, depth: 2 } as unknown as RunContext);
    expect(deeper).not.toBe(first);
    expect((await first).workdir).toBe(path.join(root, 'work'));
    const later = resolve(spec, ctx);
    expect(later).not.toBe(first);
    await Promise.all([deeper, later]);
  });
});

describe('detailOutput', () => {
  it('keeps short outputs whole and cuts long ones at a character boundary within 1024 bytes', () => {
    expect(detailOutput('x'.repeat(1024))).toBe('x'.repeat(1024));
    expect(detailOutput('x'.repeat(1025))).toBe(`${'x'.repeat(1024)}... (truncated)`);
    // 1 + 2 * 600 bytes: the 1024th byte starts a character, the cut goes back to byte 1023.
    expect(detailOutput(`a${'é'.repeat(600)}`)).toBe(`a${'é'.repeat(511)}... (truncated)`);
  });

  it('masks a key before it cuts: a key the cut goes through leaves no part of itself', () => {
    const key = 'sk-detail-0123456789abcdefghijklmnop';
    addSecret(key);
    // The key straddles byte 1024; masked, the output fits.
    expect(detailOutput(`${'x'.repeat(1010)} ${key} tail`)).toBe(`${'x'.repeat(1010)} *** tail`);
    expect(detailOutput(`${'x'.repeat(1010)} ${key} ${'z'.repeat(100)}`)).toBe(
      `${'x'.repeat(1010)} *** ${'z'.repeat(1024 - 1015)}... (truncated)`,
    );
  });
});
