// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${name} syntax of agent files is what is under test
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { loadErrorFrom, loadFrom, tempDir } from './helpers.js';

const load = (content: string, name = 'helper.md', env: NodeJS.ProcessEnv = {}) =>
  loadFrom(name, content, env);
const errorOf = (content: string) => loadErrorFrom('helper.md', content);

describe('Markdown agents (Claude Code / Gemini CLI / opencode front-matter)', () => {
  it('maps a Claude Code agent: tools string, alias model, maxTurns, disallowedTools, body as prompt', async () => {
    const spec = await load(`---
name: code-reviewer
description: Expert code reviewer. Use after writing code.
tools: Read, Grep, Glob, Bash, WebFetch
disallowedTools: [Write]
model: sonnet
maxTurns: 12
color: blue
---

You are a senior code reviewer.

Review the diff.
`);
    expect(spec).toMatchObject({
      name: 'helper',
      declaredName: 'code-reviewer',
      format: 'markdown',
      description: 'Expert code reviewer. Use after writing code.',
      model: { provider: 'anthropic', model: 'claude-sonnet-5-5' },
      tools: ['read_file', 'grep_files', 'glob_files', 'run_command', 'url_fetch'],
      disallowedTools: ['write_file'],
      maxTurns: 12,
      systemPrompt: 'You are a senior code reviewer.\n\nReview the diff.',
    });
    expect(spec.warnings).toEqual([
      expect.stringMatching(/helper\.md:8:\d+: color: Claude Code field not supported by axe yet; ignored$/),
    ]);
  });

  it('maps Claude Code Agent(...) to sub_agents, one skill, inline mcpServers; warns for the rest', async () => {
    const spec = await load(`---
name: lead
tools: Read, Agent(worker, tester), Task(helper), mcp__github__search, mcp_*
skills: [review]
initialPrompt: Go
mcpServers:
  - github
  - gh:
      type: http
      url: https://127.0.0.1:9/mcp
      headers: { Authorization: "Bearer \${GH_TOKEN}" }
  - fs:
      command: npx
      args: [server]
      cwd: /tmp
---
Lead.
`);
    expect(spec).toMatchObject({
      tools: ['read_file'],
      subAgents: ['worker', 'tester', 'helper'],
      skill: 'review',
      mcpServers: [
        {
          name: 'gh',
          transport: 'streamable-http',
          url: 'https://127.0.0.1:9/mcp',
          headers: { Authorization: `Bearer \${GH_TOKEN}` },
        },
        { name: 'fs', transport: 'stdio', command: 'npx', args: ['server'], env: {} },
      ],
    });
    expect(spec.warnings).toEqual([
      expect.stringMatching(/:3:\d+: tools: "mcp__github__search": MCP tools come from mcp_servers/),
      expect.stringMatching(
        /:3:\d+: tools: "mcp_\*": tool wildcards are not supported; list the tools; ignored$/,
      ),
      expect.stringMatching(/:5:\d+: initialPrompt: Claude Code field not supported by axe yet; ignored$/),
      expect.stringMatching(
        /:7:\d+: mcpServers: "github" names a server configured in Claude Code; axe needs/,
      ),
      expect.stringMatching(/:7:\d+: mcpServers: fs\.cwd: not supported by axe yet; ignored$/),
    ]);
    const twoSkills = await load('---\nname: x\nskills: one, two\n---\nb\n');
    expect(twoSkills.skill).toBe('one');
    expect(twoSkills.warnings).toEqual([
      expect.stringMatching(/:3:\d+: skills: axe loads one skill: "one" is used, "two" ignored$/),
    ]);
    expect(await errorOf('---\nname: x\nmcpServers:\n  s: { type: ws }\n---\nb\n')).toMatch(
      /helper\.md:4:\d+: mcpServers: s\.type: must be stdio, http or sse \(got "ws"\)$/,
    );
  });

  it("maps Gemini CLI's mcpServers table (url = SSE, httpUrl = streamable HTTP) and grep_search", async () => {
    const spec = await load(
      '---\nname: g\ntools: [read_file, grep_search]\nmcpServers:\n  a: { url: "http://127.0.0.1:1/sse" }\n  b: { httpUrl: "http://127.0.0.1:1/mcp" }\n---\nhi\n',
    );
    expect(spec.tools).toEqual(['read_file', 'grep_files']);
    expect(spec.mcpServers).toMatchObject([
      { name: 'a', transport: 'sse', url: 'http://127.0.0.1:1/sse' },
      { name: 'b', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' },
    ]);
    expect(spec.warnings).toEqual([]);
  });

  it('reads inherit (or no model) as "the caller\'s model", and tools as a YAML list', async () => {
    const spec = await load(
      '---\nname: a\ndescription: d\nmodel: inherit\ntools:\n  - read_file\n  - Edit\n---\nbody\n',
    );
    expect(spec.model).toBeUndefined();
    expect(spec.tools).toEqual(['read_file', 'edit_file']);
    expect((await load('---\nname: a\n---\nbody\n')).model).toBeUndefined();
  });

  it('maps Gemini CLI fields: timeout_mins, temperature, max_turns, a bare gemini model', async () => {
    const spec = await load(
      '---\nname: g\ndescription: d\nmodel: gemini-2.5-pro\ntemperature: 0\nmax_turns: 5\ntimeout_mins: 2\nkind: local\n---\nhi\n',
    );
    expect(spec).toMatchObject({
      model: { provider: 'google', model: 'gemini-2.5-pro' },
      params: { temperature: 0 },
      maxTurns: 5,
      timeout: 120,
    });
    expect(spec.warnings).toEqual([]);
    expect(await errorOf('---\nname: g\nkind: remote\nagent_card_url: https://x\n---\n')).toMatch(
      /helper\.md:3:\d+: kind: must be "local": Gemini CLI remote \(A2A\) agents cannot run in axe \(got "remote"\)$/,
    );
  });

  it("maps opencode's tools table and warns about its unsupported fields", async () => {
    const spec = await load(
      '---\ndescription: d\nmodel: anthropic/claude-haiku-4-5\nmode: subagent\ntools:\n  write: false\n  edit: true\n  bash: true\n---\nhi\n',
    );
    // opencode's table changes the default tools: write stays off, edit and bash are added.
    expect(spec.tools).toEqual([
      'list_directory',
      'read_file',
      'glob_files',
      'grep_files',
      'edit_file',
      'run_command',
    ]);
    expect(spec.warnings).toEqual([expect.stringMatching(/mode: opencode field not supported/)]);
  });

  it('opencode\'s "*" sets every tool first: off, then the ones named; on, then the ones taken away', async () => {
    const only = await load('---\ndescription: d\ntools:\n  "*": false\n  read: true\n---\nhi\n');
    expect(only.tools).toEqual(['read_file']);
    const most = await load('---\ndescription: d\ntools:\n  "*": true\n  bash: false\n---\nhi\n');
    expect(most.tools).toContain('write_file');
    expect(most.tools).not.toContain('run_command');
    expect([...only.warnings, ...most.warnings]).toEqual([]);
  });

  it('accepts every axe field in snake_case', async () => {
    const spec = await load(
      '---\nname: s\nmodel: openai/gpt-4o\nsub_agents: [a]\nsub_agents_config:\n  max_depth: 2\nparams:\n  max_tokens: 100\nretry:\n  max_retries: 0\n---\nhi\n',
    );
    expect(spec).toMatchObject({
      subAgents: ['a'],
      subAgentsConfig: { maxDepth: 2 },
      params: { maxTokens: 100 },
      retry: { maxRetries: 0 },
    });
  });

  it('loads a description with an unquoted ": " (common in Claude files)', async () => {
    const spec = await load(
      '---\nname: r\ndescription: Use this agent when: the user asks for a review\nmodel: haiku\n---\nbody\n',
    );
    expect(spec.description).toBe('Use this agent when: the user asks for a review');
    expect(spec.model).toEqual({ provider: 'anthropic', model: 'claude-haiku-5-5' });
  });

  it('says how to fix front-matter that quoting cannot repair', async () => {
    const message = await errorOf('---\nname: r\ndescription: a: b\n  c: d: e\nmodel: haiku\n---\nbody\n');
    expect(message).toMatch(/helper\.md:\d+:\d+: .*put it in quotes \(description: "…"\)$/);
  });

  it('rejects ---js front-matter without running it', async () => {
    const dir = tempDir();
    const marker = join(dir, 'pwned');
    const js = `---js\n{ name: (require('fs').writeFileSync(${JSON.stringify(marker)}, 'x'), 'evil') }\n---\nbody\n`;
    const files = {
      'evil.md': js,
      'evil2.md': js.replace('---js', '---javascript'),
      'evil3.md': js.replace('---js', '--- coffee'),
    };
    for (const [name, content] of Object.entries(files)) {
      const message = await errorOf(content);
      expect(message).toMatch(
        /helper\.md:1: front-matter language ".+" is not supported: axe reads YAML front-matter only/,
      );
      await expect(load(content, name)).rejects.toThrow(ConfigError);
    }
    expect(existsSync(marker)).toBe(false);
    expect((await load('---yaml\nname: y\n---\nhi\n')).declaredName).toBe('y');
  });

  it('requires front-matter, closed, and a mapping', async () => {
    expect(await errorOf('# just a document\n')).toMatch(/helper\.md:1: no front-matter/);
    expect(await errorOf('---\nname: x\n')).toMatch(/front-matter is not closed/);
    expect(await errorOf('---\n- a\n- b\n---\nhi\n')).toMatch(/front-matter must be a YAML mapping/);
  });

  it('reads typed inputs as `input:` or in the `inputConfig: { inputs }` spelling', async () => {
    const spec = await load(
      '---\nname: r\ninputConfig:\n  inputs:\n    file_path: { type: string, required: true, description: File }\n---\nReview ${file_path}\n',
    );
    expect(spec.inputs).toEqual([{ name: 'file_path', type: 'string', required: true, description: 'File' }]);
    const plain = await load('---\nname: r\ninput:\n  n: { type: integer }\n---\nhi\n');
    expect(plain.inputs).toEqual([{ name: 'n', type: 'integer', required: false, description: '' }]);
    expect(await errorOf('---\nname: r\ninput:\n  n: { type: date }\n---\nhi\n')).toMatch(/input\.n\.type/);
  });

  it('says exactly what to fix in a misplaced or misdrawn front-matter', async () => {
    expect(await errorOf('  ---\n  name: x\n  ---\nhi\n')).toMatch(
      /helper\.md:1: the front-matter's "---" is indented: start it/,
    );
    expect(await errorOf('\n\n---\nname: x\n---\nhi\n')).toMatch(
      /helper\.md:3: the front-matter must start on the first line/,
    );
    expect(await errorOf('-----\nname: x\n-----\nhi\n')).toMatch(
      /helper\.md:1: front-matter opens with "-----": write exactly "---"/,
    );
    expect(await errorOf('---\nname: x\n----------\nhi\n')).toMatch(
      /helper\.md:3: front-matter closes with "----------": write exactly "---"/,
    );
    expect(await errorOf('---\nname: x\n  ---\nhi\n')).toMatch(
      /helper\.md:3: front-matter closes with an indented "---"/,
    );
  });

  it('names unknown keys with a did-you-mean and the line, using the key as written', async () => {
    // Claude Code and opencode ignore keys they do not know (`category:`, `version:`): so does axe.
    const spec = await load('---\nname: x\ndescripton: d\ncategory: review\n---\nhi\n');
    expect(spec.warnings).toEqual([
      expect.stringMatching(
        /helper\.md:3:\d+: descripton: unknown field, ignored \(did you mean "description"\?\)$/,
      ),
      expect.stringMatching(/helper\.md:4:\d+: category: unknown field, ignored$/),
    ]);
    expect(await errorOf('---\nname: x\nmaxTurns: 80\n---\nhi\n')).toMatch(
      /helper\.md:3:\d+: maxTurns: must be <= 50 \(got 80\)/,
    );
  });

  it('refuses a prompt given twice and a temperature given twice', async () => {
    expect(await errorOf('---\nname: x\nsystem_prompt: a\n---\nbody\n')).toMatch(/system_prompt: given both/);
    expect(await errorOf('---\nname: x\ntemperature: 1\nparams:\n  temperature: 0\n---\nb\n')).toMatch(
      /temperature/,
    );
  });
});

describe('foreign agent files load as their own programs load them', () => {
  it("knows every current Claude Code tool name: mapped to axe's, or one warning, never offered", async () => {
    const names = [
      'Read',
      'Write',
      'Edit',
      'MultiEdit',
      'Bash',
      'BashOutput',
      'KillBash',
      'KillShell',
      'Glob',
      'Grep',
      'LS',
      'WebFetch',
      'WebSearch',
      'NotebookEdit',
      'NotebookRead',
      'TodoWrite',
      'Task',
      'Skill',
      'SlashCommand',
      'ExitPlanMode',
      'TaskCreate',
      'TaskGet',
      'TaskList',
      'TaskUpdate',
      'SendMessage',
      'ListMcpResourcesTool',
      'ReadMcpResourceTool',
      'AskUserQuestion',
    ];
    const spec = await load(`---\nname: all\nmodel: sonnet\ntools: ${names.join(', ')}\n---\nhi\n`);
    expect(spec.tools).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'run_command',
      'glob_files',
      'grep_files',
      'list_directory',
      'url_fetch',
      'web_search',
    ]);
    expect(spec.warnings.every((w) => /has no axe equivalent yet; ignored$/.test(w))).toBe(true);
    expect(spec.warnings).toHaveLength(18);
  });

  it('a Markdown agent without tools gets the read-only ones, and a note says so', async () => {
    const spec = await load('---\nname: quiet\nmodel: sonnet\n---\nhi\n');
    expect(spec.tools).toEqual(['list_directory', 'read_file', 'glob_files', 'grep_files']);
    expect(spec.warnings).toEqual([]);
    expect(spec.notes).toEqual([
      expect.stringMatching(
        /tools: not given: the read-only tools list_directory, read_file, glob_files, grep_files/,
      ),
    ]);
    expect((await load('---\nname: none\nmodel: sonnet\ntools: []\n---\nhi\n')).tools).toEqual([]);
  });

  it("Claude Code's Bash(…) entries: allow rules in tools, deny rules in disallowedTools", async () => {
    const spec = await load(
      '---\nname: helper\nmodel: sonnet\ntools: Read, Bash(git diff:*), Bash(npm test)\ndisallowedTools: [Bash(git push *)]\n---\nhi\n',
    );
    expect(spec.tools).toEqual(['read_file', 'run_command']);
    expect(spec.disallowedTools).toEqual([]);
    expect(spec.permissions).toEqual({ allow: ['git diff', 'npm test'], deny: ['git push'] });
    expect(spec.warnings).toEqual([]);
  });

  it("an unknown front-matter key is a warning with a did-you-mean over the other programs' fields", async () => {
    const spec = await load(
      '---\nname: k\nmodel: sonnet\ntools: Read\ncategory: quality\nhiden: true\n---\nhi\n',
    );
    expect(spec.warnings).toEqual([
      expect.stringMatching(/category: unknown field, ignored$/),
      expect.stringMatching(/hiden: unknown field, ignored \(did you mean "hidden"\?\)$/),
    ]);
  });
});
