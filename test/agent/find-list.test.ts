import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findAgentFile } from '../../internal/agent/agent-files.js';
import { listAgents, loadAgent } from '../../internal/agent/load.js';
import { parseModelRef } from '../../internal/agent/model.js';
import { ConfigError } from '../../internal/errors.js';
import { tempDir } from './helpers.js';

const agent = (name: string, description = '') =>
  `name = "${name}"\ndescription = "${description}"\nmodel = "a/b"\n`;

describe('findAgentFile / loadAgent', () => {
  it('takes the first directory that has the agent, and .toml before .md before .yaml before .yml', async () => {
    const first = tempDir({ 'x.md': '---\nname: md\n---\nhi\n', 'x.yml': 'name: yml\nmodel: a/b\n' });
    const second = tempDir({
      'x.toml': agent('second'),
      'y.yaml': 'name: y\nmodel: a/b\n',
      'y.yml': 'name: yml\nmodel: a/b\n',
    });
    expect(await findAgentFile('x', [first, second])).toBe(join(first, 'x.md'));
    expect(await findAgentFile('y', [first, second])).toBe(join(second, 'y.yaml'));
    expect(await findAgentFile('z', [first, second, '/nonexistent'])).toBeUndefined();
    expect((await loadAgent('x', { searchDirs: [second, first], env: {} })).declaredName).toBe('second');
  });

  it('rejects names that would leave the agents directory', async () => {
    for (const name of ['../x', 'a/b', 'a\\b', '..', '']) {
      await expect(findAgentFile(name, [tempDir()])).rejects.toThrow(ConfigError);
    }
  });

  it("says Go axe's words when an agent does not exist", async () => {
    await expect(loadAgent('ghost', { searchDirs: [tempDir()], env: {} })).rejects.toThrow(
      /^agent config not found: ghost$/,
    );
  });
});

describe('listAgents', () => {
  it('lists the good agents of every directory, first name wins, and reports each broken file', async () => {
    const first = tempDir({
      'a.toml': agent('a', 'first a'),
      'broken.toml': 'name = "x"\nmodel = \n',
      'README.md': '# not an agent',
      'notes.txt': 'ignored',
    });
    const second = tempDir({
      'a.toml': agent('a', 'second a'),
      'b.md': '---\ndescription: bee\n---\nhi\n',
      'c.yaml': 'nope: 1\n',
    });
    const { agents, problems } = await listAgents([first, second, '/nonexistent'], {});
    expect(agents.map((spec) => [spec.name, spec.description])).toEqual([
      ['a', 'first a'],
      ['b', 'bee'],
    ]);
    expect(problems.map((problem) => problem.file)).toEqual([
      join(first, 'broken.toml'),
      join(second, 'c.yaml'),
    ]);
    expect(problems[0]?.message).toMatch(/broken\.toml:2:\d+: /);
  });
});

describe('parseModelRef', () => {
  it('splits on the first slash, expands aliases and reads inherit as undefined', () => {
    expect(parseModelRef('anthropic/claude-sonnet-4-5')).toEqual({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
    });
    expect(parseModelRef('openrouter/google/gemini-2.5-flash')).toEqual({
      provider: 'openrouter',
      model: 'google/gemini-2.5-flash',
    });
    expect(parseModelRef('opus')).toEqual({ provider: 'anthropic', model: 'claude-opus-5-5' });
    expect(parseModelRef('inherit')).toBeUndefined();
    for (const bad of ['gpt-4o', '/x', 'x/', 'constructor', ''])
      expect(() => parseModelRef(bad)).toThrow(ConfigError);
  });
});
