import { describe, expect, it } from 'vitest';
import { lintAgents } from '../../internal/agent/lint.js';
import { type Finding, formatFinding } from '../../internal/agent/load.js';
import { tempDir } from './helpers.js';

async function lint(files: Record<string, string>, names: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const dir = tempDir(files);
  const configDir = tempDir({ 'skills/s/SKILL.md': '# s' });
  const result = await lintAgents({
    names,
    searchDirs: [dir],
    env,
    configDir,
    globalConfig: { providers: {} },
  });
  return {
    ...result,
    lines: result.findings.map((finding: Finding) => `${finding.severity} ${formatFinding(finding)}`),
  };
}

const toml = (name: string, extra = '') => `name = "${name}"\nmodel = "anthropic/claude-haiku-4-5"\n${extra}`;

describe('lintAgents', () => {
  it('finds nothing wrong with a clean tree', async () => {
    const result = await lint({
      'lead.toml': toml('lead', 'sub_agents = ["worker"]\nskill = "s"\n'),
      'worker.md': '---\nname: worker\nmodel: haiku\ntools: [read_file]\n---\nWork.\n',
    });
    expect(result).toMatchObject({ checked: 2, findings: [] });
  });

  it('reports sub-agents that do not exist or do not load, with a did-you-mean', async () => {
    const result = await lint(
      {
        'lead.toml': toml('lead', 'sub_agents = ["workr", "broken"]\n'),
        'worker.toml': toml('worker'),
        'broken.toml': 'name = 1\n',
      },
      ['lead'],
    );
    expect(result.lines).toEqual([
      expect.stringMatching(
        /^error .*lead\.toml:3:1: sub_agents\[0\]: agent config not found: workr \(did you mean "worker"\?\)$/,
      ),
      expect.stringMatching(/^error .*lead\.toml:3:1: sub_agents\[1\]: "broken" does not load: /),
    ]);
  });

  it('reports a cycle once, and a chain deeper than max_depth as a warning', async () => {
    const cyclic = await lint(
      {
        'a.toml': toml('a', 'sub_agents = ["b"]\n'),
        'b.toml': toml('b', 'sub_agents = ["c"]\n'),
        'c.toml': toml('c', 'sub_agents = ["a"]\n'),
      },
      ['a'],
    );
    expect(cyclic.lines).toEqual([
      expect.stringMatching(/a\.toml:3:1: sub_agents: cycle in the agent graph: a → b → c → a$/),
    ]);
    const deep = await lint(
      {
        'a.toml': toml('a', 'sub_agents = ["b"]\n[sub_agents_config]\nmax_depth = 1\n'),
        'b.toml': toml('b', 'sub_agents = ["c"]\n'),
        'c.toml': toml('c'),
      },
      ['a'],
    );
    expect(deep.lines).toEqual([
      expect.stringMatching(
        /^warning .*a\.toml:5:1: sub_agents_config\.max_depth: chain a → b → c is 2 calls deep but max_depth is 1: b will run without its sub-agents$/,
      ),
    ]);
  });

  it('checks tools: unknown ones are errors unless MCP servers may provide them', async () => {
    const result = await lint({
      'a.toml': toml('a', 'tools = ["read_files", "call_agent"]\n'),
      'b.toml': toml(
        'b',
        'tools = ["search_issues"]\n[[mcp_servers]]\nname = "gh"\nurl = "http://127.0.0.1:1/mcp"\n',
      ),
    });
    expect(result.lines).toEqual([
      expect.stringMatching(
        /^error .*a\.toml:3:1: tools\[0\]: unknown tool "read_files" in tools config \(did you mean "read_file"\?\)/,
      ),
      expect.stringMatching(
        /^error .*a\.toml:3:1: tools\[1\]: unknown tool "call_agent" in tools config: "call_agent" comes with sub_agents/,
      ),
    ]);
  });

  it('refuses duplicate MCP server names in Go words', async () => {
    const result = await lint({
      'a.toml': toml(
        'a',
        '[[mcp_servers]]\nname = "s"\nurl = "http://127.0.0.1:1/mcp"\n[[mcp_servers]]\nname = "s"\ncommand = "srv"\n',
      ),
    });
    expect(result.lines).toEqual([
      expect.stringMatching(
        /^error .*a\.toml:\d+:1: mcp_servers\[1\]\.name: mcp_servers names must be unique: "s"$/,
      ),
    ]);
  });

  it('refuses a missing skill (as run does); warns about unset variables in MCP settings and URLs as hosts', async () => {
    const result = await lint(
      {
        'a.toml': toml(
          'a',
          `skill = "nope"\nallowed_hosts = ["https://x.example"]\n[[mcp_servers]]\nname = "s"\nurl = "http://127.0.0.1:1/mcp"\nheaders = { Authorization = "Bearer \${TOKEN}", X = "\${SET}" }\n`,
        ),
      },
      [],
      { SET: '1' },
    );
    expect(result.lines).toEqual([
      expect.stringMatching(/^error .*a\.toml:3:1: skill: not found/),
      expect.stringMatching(
        /^warning .*a\.toml:4:1: allowed_hosts\[0\]: "https:\/\/x\.example" should be a bare host name/,
      ),
      expect.stringMatching(
        /^warning .*a\.toml:8:1: mcp_servers\[0\]\.headers\.Authorization: \$\{TOKEN\} is not set$/,
      ),
    ]);
  });

  it('looks for a skill where axe run reads it, not in other places', async () => {
    // A bare name is `<config>/skills/<name>/SKILL.md`; `<config>/skills` itself exists but is not it.
    const result = await lint({ 'a.toml': toml('a', 'skill = "skills"\n') });
    expect(result.lines).toEqual([
      expect.stringMatching(
        /^error .*a\.toml:3:1: skill: not found \(looked for .*\/skills\/skills\/SKILL\.md\); axe run fails without it/,
      ),
    ]);
  });

  it('reports unknown providers and agents that are asked for but missing', async () => {
    const result = await lint({ 'a.toml': 'name = "a"\nmodel = "nowhere/m"\n' }, ['a', 'ghost', '../x']);
    expect(result.lines).toEqual([
      expect.stringMatching(/^error \.\.\/x: invalid agent name/),
      expect.stringMatching(/^error .*a\.toml:2:1: model: unsupported provider "nowhere"/),
      expect.stringMatching(/^error ghost: agent config not found: ghost$/),
    ]);
  });
});
