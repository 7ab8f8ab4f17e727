import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectAgentFile, loadAgentFile } from '../../internal/agent/load.js';
import { loadErrorFrom, loadFrom, tempDir } from './helpers.js';

/** The Go axe documentation's full example (docs/src/configuration/agent-config.md), unchanged. */
const GO_AXE_EXAMPLE = `name = "pr-reviewer"
description = "Reviews pull requests for issues and improvements"
model = "anthropic/claude-sonnet-4-20250514"
system_prompt = "You are a senior code reviewer. Be concise and actionable."
skill = "skills/code-review/SKILL.md"
files = ["src/**/*.go", "CONTRIBUTING.md"]
workdir = "/home/user/projects/myapp"
tools = ["read_file", "list_directory", "run_command"]
sub_agents = ["test-runner", "lint-checker"]
allowed_hosts = ["api.example.com", "docs.example.com"]
timeout = 120       # top-level request timeout in seconds (default: 120)
stream = false      # enable streaming responses (default: false)

[sub_agents_config]
max_depth = 3       # maximum nesting depth (hard max: 5)
parallel = true     # run sub-agents concurrently
timeout = 120       # per sub-agent timeout in seconds

[memory]
enabled = true
last_n = 10         # load last N entries into context
max_entries = 100   # warn when exceeded

[[mcp_servers]]
name = "my-tools"
url = "https://my-mcp-server.example.com/sse"
transport = "sse"
headers = { Authorization = "Bearer \${MY_TOKEN}" }

[params]
temperature = 0.3
max_tokens = 4096
# response_format = "json_object"   # text, json_object, or json_schema

[budget]
max_tokens = 50000    # 0 = unlimited (default)

[retry]
max_retries = 3
backoff = "exponential"
initial_delay_ms = 500
max_delay_ms = 30000

[[mcp_servers]]
name = "filesystem"
transport = "stdio"
command = "/usr/local/bin/mcp-server-filesystem"
args = ["--root", "/home/user/projects"]
`;

const load = (content: string, env: NodeJS.ProcessEnv = {}, name = 'agent.toml') =>
  loadFrom(name, content, env);
const errorOf = (content: string, env: NodeJS.ProcessEnv = {}) => loadErrorFrom('agent.toml', content, env);

describe('TOML agent files (the Go axe schema)', () => {
  it('loads the Go axe documentation example with every field mapped', async () => {
    const spec = await load(GO_AXE_EXAMPLE, {}, 'pr-reviewer.toml');
    expect(spec).toMatchObject({
      name: 'pr-reviewer',
      description: 'Reviews pull requests for issues and improvements',
      format: 'toml',
      model: { provider: 'anthropic', model: 'claude-sonnet-4-20250514' },
      systemPrompt: 'You are a senior code reviewer. Be concise and actionable.',
      skill: 'skills/code-review/SKILL.md',
      files: ['src/**/*.go', 'CONTRIBUTING.md'],
      workdir: '/home/user/projects/myapp',
      timeout: 120,
      stream: false,
      tools: ['read_file', 'list_directory', 'run_command'],
      subAgents: ['test-runner', 'lint-checker'],
      allowedHosts: ['api.example.com', 'docs.example.com'],
      subAgentsConfig: { maxDepth: 3, parallel: true, timeout: 120 },
      memory: { enabled: true, lastN: 10, maxEntries: 100 },
      params: { temperature: 0.3, maxTokens: 4096 },
      budget: { maxTokens: 50000 },
      retry: { maxRetries: 3, backoff: 'exponential', initialDelayMs: 500, maxDelayMs: 30000 },
      warnings: [],
    });
    expect(spec.declaredName).toBeUndefined();
    expect(spec.mcpServers).toEqual([
      {
        name: 'my-tools',
        transport: 'sse',
        url: 'https://my-mcp-server.example.com/sse',
        headers: { Authorization: `Bearer \${MY_TOKEN}` },
      },
      {
        name: 'filesystem',
        transport: 'stdio',
        command: '/usr/local/bin/mcp-server-filesystem',
        args: ['--root', '/home/user/projects'],
        env: {},
      },
    ]);
  });

  it('applies the defaults to a minimal file', async () => {
    const spec = await load('name = "min"\nmodel = "openai/gpt-4o"\n', {}, 'min.toml');
    expect(spec).toEqual({
      name: 'min',
      description: '',
      source: expect.stringMatching(/min\.toml$/),
      format: 'toml',
      model: { provider: 'openai', model: 'gpt-4o' },
      systemPrompt: '',
      files: [],
      tools: [],
      disallowedTools: [],
      allowedHosts: [],
      readOnly: false,
      permissions: { allow: [], deny: [] },
      forkContext: false,
      subAgents: [],
      subAgentsConfig: {
        maxDepth: 3,
        parallel: true,
        timeout: 0,
        resultFormat: 'text',
        overrides: false,
        spawn: false,
        maxSpawn: 16,
        delegate: false,
        maxSubtasks: 5,
        background: false,
        askParent: false,
        resume: false,
        maxQuestions: 3,
      },
      memory: { enabled: false, lastN: 10, maxEntries: 100 },
      params: {},
      retry: { maxRetries: 2, backoff: 'exponential', initialDelayMs: 500, maxDelayMs: 30000 },
      budget: {},
      artifacts: { enabled: false, defaultWrite: false },
      mcpServers: [],
      inputs: [],
      warnings: [],
      notes: [],
    });
  });

  it('keeps an explicit temperature = 0, max_depth = 0 means 3, and the name is the file name', async () => {
    const spec = await load(
      'name = "Other"\nmodel = "a/b"\n[params]\ntemperature = 0\n[sub_agents_config]\nmax_depth = 0\n',
    );
    expect(spec.params.temperature).toBe(0);
    expect(spec.subAgentsConfig.maxDepth).toBe(3);
    expect(spec.name).toBe('agent');
    expect(spec.declaredName).toBe('Other');
  });

  it('splits the model on the first slash only', async () => {
    const spec = await load('name = "x"\nmodel = "openrouter/meta-llama/llama-3.1-8b"\n');
    expect(spec.model).toEqual({ provider: 'openrouter', model: 'meta-llama/llama-3.1-8b' });
  });

  it("keeps Go axe's sub-agent rules, naming file and field", async () => {
    const base = 'name = "x"\nmodel = "a/b"\n[sub_agents_config]\n';
    expect(await errorOf(`${base}max_depth = 6\n`)).toMatch(
      /agent\.toml:4:1: sub_agents_config\.max_depth: must be <= 5 \(got 6\); sub_agents_config\.max_depth cannot exceed 5$/,
    );
    expect(await errorOf(`${base}max_depth = -1\n`)).toMatch(
      /sub_agents_config\.max_depth: must be >= 0 \(got -1\); sub_agents_config\.max_depth must be non-negative$/,
    );
    expect(await errorOf(`${base}timeout = -1\n`)).toMatch(
      /sub_agents_config\.timeout: must be >= 0 \(got -1\); sub_agents_config\.timeout must be non-negative$/,
    );
    expect(await errorOf('model = "a/b"\n')).toMatch(/agent\.toml: name: missing required field/);
    expect(await errorOf('name = "x"\n')).toMatch(/agent\.toml: model: missing required field/);
  });

  it('names unknown keys with a did-you-mean, and wrong types with expected and actual', async () => {
    // Go's decoder ignores a key it does not know: the file loads, and axe says so.
    const typo = await load('name = "x"\nmodel = "a/b"\nsystem_promt = "hi"\n');
    expect(typo.systemPrompt).toBe('');
    expect(typo.warnings).toEqual([
      expect.stringMatching(/system_promt: unknown field, ignored \(did you mean "system_prompt"\?\)$/),
    ]);
    expect(await errorOf('name = "x"\nmodel = "a/b"\ntools = "read_file"\n')).toMatch(
      /tools: must be a list \(got "read_file"\)/,
    );
    expect(await errorOf('name = "x"\nmodel = "gpt-4o"\n')).toMatch(
      /model: must be "provider\/model".*\(got "gpt-4o"\)/,
    );
    expect(await errorOf('name = "x"\nmodel = "a/b"\n[retry]\nbackoff = "expo"\n')).toMatch(
      /retry\.backoff: must be one of "exponential", "linear", "fixed" \(got "expo"\)/,
    );
    expect(await errorOf('name = "x"\nmodel = "a/b"\n[params]\ntemperature = 2.5\n')).toMatch(
      /params\.temperature: must be <= 2 \(got 2\.5\)/,
    );
  });

  it('reports every error of a file, and loadAgentFile says how many more there are', async () => {
    const dir = tempDir({ 'many.toml': 'name = 1\nmodel = 2\nbogus = 3\n' });
    const report = await inspectAgentFile(join(dir, 'many.toml'), {});
    expect(report.findings.map((finding) => finding.field)).toEqual(['bogus', 'name', 'model']);
    expect(report.findings.map((finding) => finding.severity)).toEqual(['warning', 'error', 'error']);
    await expect(loadAgentFile(join(dir, 'many.toml'), {})).rejects.toThrow(
      /\(and 1 more: run axe validate many\)$/,
    );
  });

  it('gives line and column of a TOML syntax error', async () => {
    expect(await errorOf('name = "x"\nmodel = "a/b\n')).toMatch(/agent\.toml:2:\d+: /);
    expect(await errorOf('name = "x"\nname = "y"\n')).toMatch(/agent\.toml:2:\d+: /);
  });

  it('rejects TOML dates and invalid UTF-8; ignores [constructor] and [__proto__] without touching prototypes', async () => {
    expect(await errorOf('name = "x"\nmodel = "a/b"\ndescription = 1979-05-27\n')).toMatch(
      /description: dates are not supported here/,
    );
    const dir = tempDir({
      'bad.toml': new Uint8Array([0x6e, 0x61, 0x6d, 0x65, 0x3d, 0x22, 0xc3, 0x28, 0x22]),
    });
    await expect(loadAgentFile(join(dir, 'bad.toml'), {})).rejects.toThrow(
      /bad\.toml:1:7: not valid UTF-8 \(first bad byte 0xc3 at offset 6\): save the file as UTF-8$/,
    );
    // Valid characters before it (é is two bytes) and a bad first byte: the place is the bad byte's.
    const later = tempDir({
      'later.toml': Buffer.concat([
        Buffer.from('name = "x"\ndescription = "\u00e9\u00e9\u00e9\u00e9"\nnote = "caf', 'utf8'),
        Buffer.from([0xe9, 0x22, 0x0a]),
      ]),
      'first.toml': new Uint8Array([0xff, 0x0a, 0x61, 0x0a]),
    });
    await expect(loadAgentFile(join(later, 'later.toml'), {})).rejects.toThrow(
      /later\.toml:3:12: not valid UTF-8 \(first bad byte 0xe9 at offset 47\)/,
    );
    await expect(loadAgentFile(join(later, 'first.toml'), {})).rejects.toThrow(
      /first\.toml:1:1: not valid UTF-8 \(first bad byte 0xff at offset 0\)/,
    );
    for (const table of ['constructor', '__proto__']) {
      const spec = await load(`name = "x"\nmodel = "a/b"\n[${table}]\nenabled = true\n`);
      expect(spec.warnings).toEqual([expect.stringMatching(new RegExp(`${table}: unknown field, ignored`))]);
    }
    expect(({} as Record<string, unknown>).enabled).toBeUndefined();
  });

  it('expands ~ and $VAR in workdir and memory.path, and names an unset variable', async () => {
    const env = { HOME: '/home/u', PROJECT: 'app' };
    const spec = await load(
      `name = "x"\nmodel = "a/b"\nworkdir = "~/src/$PROJECT"\n[memory]\npath = "\${HOME}/m.md"\n`,
      env,
    );
    expect(spec.workdir).toBe('/home/u/src/app');
    expect(spec.memory.path).toBe('/home/u/m.md');
    expect(await errorOf('name = "x"\nmodel = "a/b"\nworkdir = "$NOPE/x"\n', env)).toMatch(
      /workdir: \$NOPE is not set/,
    );
  });

  it("keeps Go axe's artifact rules: dir needs enabled = true, no '..', ~ expanded", async () => {
    const base = 'name = "x"\nmodel = "a/b"\n[artifacts]\n';
    expect(await errorOf(`${base}dir = "out"\n`)).toMatch(/artifacts\.enabled: missing required field/);
    expect(await errorOf(`${base}enabled = false\ndir = "out"\n`)).toMatch(
      /artifacts\.enabled: must be true \(got false\); artifacts\.dir is set but artifacts\.enabled is false$/,
    );
    expect(await errorOf(`${base}enabled = true\ndir = "a/../b"\n`)).toMatch(
      /artifacts\.dir: must not contain "\.\." \(got "a\/\.\.\/b"\)/,
    );
    const spec = await load(`${base}enabled = true\ndir = "~/art"\n`, { HOME: '/home/u' });
    expect(spec.artifacts).toEqual({ enabled: true, dir: '/home/u/art', defaultWrite: false });
  });

  it('reads response_format as a string or a table (the Go axe schema-name form too)', async () => {
    const asString = await load('name = "x"\nmodel = "a/b"\n[params]\nresponse_format = "json_object"\n');
    expect(asString.params.responseFormat).toEqual({ type: 'json_object' });
    const goStyle = await load(
      'name = "x"\nmodel = "a/b"\n[params.response_format]\ntype = "json_schema"\n[params.response_format.schema]\nname = "my_schema"\ntype = "object"\n',
    );
    expect(goStyle.params.responseFormat).toEqual({
      type: 'json_schema',
      name: 'my_schema',
      schema: { type: 'object' },
    });
    expect(
      await errorOf('name = "x"\nmodel = "a/b"\n[params.response_format]\ntype = "json_schema"\n'),
    ).toMatch(/params\.response_format\.schema: missing required field/);
  });

  it('infers the MCP transport and requires command or url', async () => {
    const spec = await load(
      'name = "x"\nmodel = "a/b"\n[[mcp_servers]]\nname = "fs"\ncommand = "npx"\n[[mcp_servers]]\nname = "web"\nurl = "http://127.0.0.1:1/mcp"\n',
    );
    expect(spec.mcpServers.map((server) => server.transport)).toEqual(['stdio', 'streamable-http']);
    expect(
      await errorOf('name = "x"\nmodel = "a/b"\n[[mcp_servers]]\nname = "fs"\ntransport = "stdio"\n'),
    ).toMatch(/mcp_servers\[0\]\.command: missing required field/);
    expect(await errorOf('name = "x"\nmodel = "a/b"\n[[mcp_servers]]\nname = "fs"\n')).toMatch(
      /mcp_servers\[0\]: needs one of "command", "url"/,
    );
  });
});
