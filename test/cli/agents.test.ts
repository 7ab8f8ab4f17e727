import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import showSchema from '../../schemas/agents-show-output.schema.json' with { type: 'json' };
import { axe, tempHome } from './run-axe.js';

const validateShow = new Ajv2020({ strict: false, allErrors: true }).compile(showSchema);

function withAgents(files: Record<string, string>) {
  const setup = tempHome();
  mkdirSync(join(setup.configDir, 'agents'), { recursive: true });
  for (const [name, content] of Object.entries(files))
    writeFileSync(join(setup.configDir, 'agents', name), content);
  return setup;
}

describe('axe agents', () => {
  it('list: sorted name - description lines; a broken file is one warning on stderr, exit 0', () => {
    const { cwd, env } = withAgents({
      'zeta.toml': 'name = "zeta"\ndescription = "Last"\nmodel = "a/b"\n',
      'alpha.md': '---\ndescription: First one\n---\nhi\n',
      'broken.yaml': 'name: [\n',
      'plain.toml': 'name = "plain"\nmodel = "a/b"\n',
    });
    const result = axe(['agents', 'list'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('alpha - First one\nplain\nzeta - Last\n');
    expect(result.stderr).toMatch(/^Warning: skipped \S*broken\.yaml:\d+:\d+: [^\n]+\n$/);
  });

  it('list: --agents-dir (repeatable) and ./axe/agents come before the config dir', () => {
    const { cwd, env } = withAgents({
      'same.toml': 'name = "same"\ndescription = "config"\nmodel = "a/b"\n',
    });
    mkdirSync(join(cwd, 'axe', 'agents'), { recursive: true });
    writeFileSync(
      join(cwd, 'axe', 'agents', 'same.toml'),
      'name = "same"\ndescription = "local"\nmodel = "a/b"\n',
    );
    mkdirSync(join(cwd, 'one'));
    mkdirSync(join(cwd, 'two'));
    writeFileSync(join(cwd, 'two', 'same.toml'), 'name = "same"\ndescription = "flag two"\nmodel = "a/b"\n');
    writeFileSync(join(cwd, 'one', 'extra.toml'), 'name = "extra"\nmodel = "a/b"\n');
    expect(axe(['agents', 'list'], { cwd, env }).stdout).toBe('same - local\n');
    expect(axe(['agents', 'list', '--agents-dir', 'one', '--agents-dir', 'two'], { cwd, env }).stdout).toBe(
      'extra\nsame - flag two\n',
    );
  });

  it("show: Go axe's label lines, only the fields the file sets", () => {
    const { cwd, env } = withAgents({
      'g.toml':
        'name = "g"\nmodel = "openai/gpt-4o"\nsystem_prompt = "Be brief."\nfiles = ["a.md", "b/*.md"]\ntimeout = 30\ntools = ["read_file"]\nsub_agents = ["x", "y"]\n[sub_agents_config]\ntimeout = 60\n[memory]\nenabled = true\nmax_entries = 50\n[params]\ntemperature = 0.7\n',
      'bare.toml': 'name = "bare"\nmodel = "openai/gpt-4o"\n[params]\ntemperature = 0\n',
    });
    expect(axe(['agents', 'show', 'g'], { cwd, env })).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Name:           g',
        'Model:          openai/gpt-4o',
        'System Prompt:  Be brief.',
        'Files:          a.md, b/*.md',
        'Timeout:        30',
        'Tools:          read_file',
        'Sub-Agents:     x, y',
        'Max Depth:      0',
        'Parallel:       true',
        'Sub-Agent Timeout:60',
        'Memory Enabled: true',
        'Memory MaxEntries:50',
        'Temperature:    0.7',
        '',
      ].join('\n'),
    });
    expect(axe(['agents', 'show', 'bare'], { cwd, env }).stdout).toBe(
      'Name:           bare\nModel:          openai/gpt-4o\n',
    );
  });

  it('show --json: every resolved field, keys and literal secrets never printed', () => {
    const { cwd, env, configDir } = withAgents({
      'r.toml':
        `name = "r"\nmodel = "anthropic/claude-haiku-4-5"\ntools = ["read_file"]\nsub_agents = ["x"]\n[params]\ntemperature = 0\n[[mcp_servers]]\nname = "gh"\nurl = "http://user:url-pass-1@127.0.0.1:1/mcp?token=query-secret-2"\nheaders = { Authorization = "Bearer \${GH_TOKEN}", "X-Key" = "literal-secret-123", Mixed = "Bearer mixed-secret-\${GH_TOKEN}" }\n` +
        `[[mcp_servers]]\nname = "local"\ncommand = "srv"\nargs = ["--root", ".", "--api-key", "arg-secret-4", "--token=eq-secret-5"]\nenv = { A = "\${GH_TOKEN}", B = "env-secret-6" }\n`,
    });
    writeFileSync(
      join(configDir, 'config.toml'),
      '[providers.anthropic]\napi_key = "sk-from-file-456"\nbase_url = "https://127.0.0.1:9/v1?key=base-secret-7"\n',
    );
    const result = axe(['agents', 'show', 'r', '--json'], {
      cwd,
      env: { ...env, ANTHROPIC_API_KEY: 'sk-env-789' },
    });
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout);
    expect(validateShow(shown), JSON.stringify(validateShow.errors)).toBe(true);
    expect(shown).toMatchObject({
      name: 'r',
      model: 'anthropic/claude-haiku-4-5',
      provider: 'anthropic (anthropic API at https://127.0.0.1:9/v1?key=***; key from ANTHROPIC_API_KEY)',
      params: { temperature: 0, max_tokens: null },
      skill: null,
      sub_agents_config: { max_depth: 3, parallel: true, timeout: 0 },
    });
    expect(shown.mcp_servers[0]).toContain(`Authorization: Bearer \${GH_TOKEN}`);
    expect(shown.mcp_servers[0]).toContain('X-Key: ***; Mixed: ***');
    expect(shown.mcp_servers[1]).toBe(
      `local stdio srv --root . --api-key *** --token=*** env A=\${GH_TOKEN} B=***`,
    );
    const secrets = ['sk-from-file-456', 'sk-env-789', 'literal-secret-123', 'mixed-secret', 'url-pass-1'];
    secrets.push('query-secret-2', 'arg-secret-4', 'eq-secret-5', 'env-secret-6', 'base-secret-7');
    for (const secret of secrets) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
    const missing = axe(['agents', 'show', 'nope'], { cwd, env });
    expect(missing).toMatchObject({ code: 2, stdout: '' });
    expect(missing.stderr).toMatch(
      /^axe: agent config not found: nope \(looked in .*\/axe\/agents, .*\/\.claude\/agents, /,
    );
  });

  it('show --json: a provider that cannot be resolved is null, and why is in errors', () => {
    const { cwd, env } = withAgents({ 'odd.toml': 'name = "odd"\nmodel = "nosuch/model-x"\n' });
    const result = axe(['agents', 'show', 'odd', '--json'], { cwd, env });
    expect(result.code).toBe(0);
    const shown = JSON.parse(result.stdout);
    expect(validateShow(shown), JSON.stringify(validateShow.errors)).toBe(true);
    expect(shown.provider).toBeNull();
    expect(shown.errors).toEqual([expect.stringMatching(/^unsupported provider "nosuch"/)]);
    expect(result.stdout).not.toContain('error: ');
  });

  it("init: Go axe's scaffold lines, in Go's order, with axe's additions among them", () => {
    const { cwd, env, configDir } = tempHome();
    expect(axe(['agents', 'init', 'helper'], { cwd, env }).code).toBe(0);
    const written = readFileSync(join(configDir, 'agents', 'helper.toml'), 'utf8').split('\n');
    const go = [
      'name = "helper"',
      'description = ""',
      '# Full provider/model per models.dev',
      'model = "provider/model-name"',
      '# Agent persona (optional)',
      '# system_prompt = ""',
      '# Default skill (optional, can be overridden with --skill flag)',
      '# skill = ""',
      '# Context files - glob patterns resolved from workdir or cwd (optional)',
      '# files = []',
      '# Working directory (optional)',
      '# workdir = ""',
      '# Tools this agent can use (optional)',
      '# Valid: list_directory, read_file, write_file, edit_file, run_command, url_fetch, web_search',
      '# tools = []',
      '# Sub-agents this agent can invoke (optional)',
      '# sub_agents = []',
      '# [sub_agents_config]',
      '# max_depth = 3',
      '# parallel = true',
      '# timeout = 120',
      '# MCP server connections (optional)',
      '# [[mcp_servers]]',
      '# name = "my-tools"',
      '# url = "https://my-mcp-server.example.com/sse"',
      '# transport = "sse"',
      `# headers = { Authorization = "Bearer \${MY_TOKEN}" }`,
      '# [memory]',
      '# enabled = false',
      '# path = ""',
      '# last_n = 10',
      '# max_entries = 100',
      '# [params]',
      '# temperature = 0.3',
      '# max_tokens = 4096',
      '# [retry]',
      '# max_retries = 0',
      '# backoff = "exponential"',
      '# initial_delay_ms = 500',
      '# max_delay_ms = 30000',
      '# [budget]',
      '# max_tokens = 0',
      '# [artifacts]',
      '# enabled = false',
      '# dir = ""',
      '# default_write = false',
    ];
    let at = 0;
    for (const line of go) {
      const found = written.indexOf(line, at);
      expect(found, line).toBeGreaterThanOrEqual(at);
      at = found + 1;
    }
    // Every line that is not Go's is marked as axe's (or belongs to a block marked so).
    expect(written.filter((line) => line.startsWith('# (axe)')).length).toBeGreaterThan(0);
  });

  it('init: a scaffold that loads, into ./axe/agents when it exists, never overwriting', () => {
    const { cwd, env, configDir } = tempHome();
    const first = axe(['agents', 'init', 'helper'], { cwd, env });
    expect(first).toEqual({ code: 0, stdout: `${join(configDir, 'agents', 'helper.toml')}\n`, stderr: '' });
    expect(parse(readFileSync(join(configDir, 'agents', 'helper.toml'), 'utf8'))).toMatchObject({
      name: 'helper',
    });
    expect(axe(['agents', 'show', 'helper'], { cwd, env }).code).toBe(0);

    const again = axe(['agents', 'init', 'helper'], { cwd, env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/^axe: agent config already exists: .*helper\.toml \(not overwritten\)\n$/);

    mkdirSync(join(cwd, 'axe', 'agents'), { recursive: true });
    expect(axe(['agents', 'init', 'local'], { cwd, env }).stdout).toBe(
      `${join(cwd, 'axe', 'agents', 'local.toml')}\n`,
    );
    expect(axe(['agents', 'init', '../evil'], { cwd, env }).code).toBe(2);
    expect(existsSync(join(cwd, 'axe', 'evil.toml'))).toBe(false);
  });

  it('edit: runs $EDITOR on the agent file', () => {
    const { cwd, env, home } = withAgents({ 'e.toml': 'name = "e"\nmodel = "a/b"\n' });
    const editor = join(home, 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\necho "edited $1" > "${join(home, 'edited')}"\n`);
    chmodSync(editor, 0o755);
    expect(axe(['agents', 'edit', 'e'], { cwd, env: { ...env, EDITOR: editor } }).code).toBe(0);
    expect(readFileSync(join(home, 'edited'), 'utf8')).toMatch(/^edited .*e\.toml\n$/);
    const noEditor = axe(['agents', 'edit', 'e'], { cwd, env });
    expect(noEditor.code).toBe(2);
    expect(noEditor.stderr).toMatch(/^axe: \$EDITOR is not set/);
    expect(axe(['agents', 'edit', 'e'], { cwd, env: { ...env, EDITOR: 'false' } }).code).toBe(1);
  });
});
