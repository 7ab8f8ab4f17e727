import { describe, expect, it } from 'vitest';
import { loadErrorFrom, loadFrom } from './helpers.js';

const errorOf = (content: string) => loadErrorFrom('agent.toml', content);

/** Go axe's `axe agents init` template (internal/agent/agent.go Scaffold), every line uncommented. */
const GO_SCAFFOLD_UNCOMMENTED = `name = "go"
description = ""
model = "anthropic/claude-sonnet-4-5"
system_prompt = ""
skill = ""
files = []
workdir = ""
tools = []
sub_agents = []
[sub_agents_config]
max_depth = 3
parallel = true
timeout = 120
[[mcp_servers]]
name = "my-tools"
url = "https://my-mcp-server.example.com/sse"
transport = "sse"
headers = { Authorization = "Bearer \${MY_TOKEN}" }
[memory]
enabled = false
path = ""
last_n = 10
max_entries = 100
[params]
temperature = 0.3
max_tokens = 4096
[retry]
max_retries = 0
backoff = "exponential"
initial_delay_ms = 500
max_delay_ms = 30000
[budget]
max_tokens = 0
`;

describe('Go axe compatibility', () => {
  it('loads Go axe\'s scaffold uncommented: an empty string means "not set", as in Go axe', async () => {
    const spec = await loadFrom('go.toml', GO_SCAFFOLD_UNCOMMENTED);
    expect(spec.skill).toBeUndefined();
    expect(spec.workdir).toBeUndefined();
    expect(spec.memory.path).toBeUndefined();
    expect(spec).toMatchObject({ retry: { maxRetries: 0 }, budget: {}, mcpServers: [{ transport: 'sse' }] });
  });

  it("keeps Go axe's retry and MCP URL rules", async () => {
    expect(
      await errorOf('name = "x"\nmodel = "a/b"\n[retry]\ninitial_delay_ms = 500\nmax_delay_ms = 100\n'),
    ).toMatch(
      /agent\.toml:5:1: retry\.max_delay_ms: must be >= retry\.initial_delay_ms \(500\) \(got 100\); retry\.max_delay_ms must be >= retry\.initial_delay_ms$/,
    );
    await expect(
      loadFrom('agent.toml', 'name = "x"\nmodel = "a/b"\n[retry]\nmax_delay_ms = 100\n'),
    ).resolves.toBeDefined();
    expect(
      await errorOf('name = "x"\nmodel = "a/b"\n[[mcp_servers]]\nname = "m"\nurl = "https://"\n'),
    ).toMatch(
      /agent\.toml:5:1: mcp_servers\[0\]\.url: must be an http:\/\/ or https:\/\/ URL with a host \(got "https:\/\/"\)$/,
    );
  });
});

describe('Go axe features', () => {
  it('[artifacts] and [memory] load without a word', async () => {
    const spec = await loadFrom(
      'keeper.toml',
      'name = "keeper"\nmodel = "anthropic/x"\n[memory]\nenabled = true\n[artifacts]\nenabled = true\ndefault_write = true\n',
    );
    expect(spec.memory.enabled).toBe(true);
    expect(spec.artifacts).toEqual({ enabled: true, defaultWrite: true });
    expect(spec.warnings).toEqual([]);
  });
});

describe("Go axe's validation messages, contained in axe's line", () => {
  const base = 'name = "x"\nmodel = "openai/gpt-4o"\n';
  const cases: [string, string][] = [
    ['model = "openai/gpt-4o"\n', 'agent config missing required field: name'],
    ['name = "x"\n', 'agent config missing required field: model'],
    [`${base}timeout = -1\n`, 'timeout must be non-negative'],
    [`${base}[sub_agents_config]\nmax_depth = -1\n`, 'sub_agents_config.max_depth must be non-negative'],
    [`${base}[sub_agents_config]\nmax_depth = 6\n`, 'sub_agents_config.max_depth cannot exceed 5'],
    [`${base}[sub_agents_config]\ntimeout = -1\n`, 'sub_agents_config.timeout must be non-negative'],
    [`${base}[memory]\nlast_n = -1\n`, 'memory.last_n must be non-negative'],
    [`${base}[memory]\nmax_entries = -1\n`, 'memory.max_entries must be non-negative'],
    [`${base}tools = ["bogus"]\n`, 'unknown tool "bogus" in tools config'],
    [
      `${base}[[mcp_servers]]\nname = ""\nurl = "http://h/x"\ntransport = "sse"\n`,
      'mcp_servers[0].name is required',
    ],
    [
      `${base}[[mcp_servers]]\nname = "a"\nurl = "ftp://h/x"\ntransport = "sse"\n`,
      'mcp_servers[0].url must use http or https scheme, got "ftp"',
    ],
    [
      `${base}[[mcp_servers]]\nname = "local"\nurl = "http://h/x"\ntransport = "sse"\n[[mcp_servers]]\nname = "local"\nurl = "http://h/y"\ntransport = "sse"\n`,
      'mcp_servers names must be unique: "local"',
    ],
    [`${base}[retry]\nmax_retries = -1\n`, 'retry.max_retries must be non-negative'],
    [`${base}[retry]\nbackoff = "weird"\n`, 'retry.backoff must be one of: exponential, linear, fixed'],
    [`${base}[retry]\ninitial_delay_ms = -1\n`, 'retry.initial_delay_ms must be non-negative'],
    [`${base}[retry]\nmax_delay_ms = -1\n`, 'retry.max_delay_ms must be non-negative'],
    [
      `${base}[retry]\ninitial_delay_ms = 500\nmax_delay_ms = 100\n`,
      'retry.max_delay_ms must be >= retry.initial_delay_ms',
    ],
    [`${base}[budget]\nmax_tokens = -1\n`, 'budget.max_tokens must be non-negative'],
    [`${base}[artifacts]\ndir = "out"\n`, 'artifacts.dir is set but artifacts.enabled is false'],
    ['name = "x"\nmodel = "noslash"\n', 'invalid model format "noslash": expected provider/model-name'],
    ['name = "x\nmodel = 1\n', 'failed to parse agent config "agent": '],
  ];
  it.each(cases)('%j', async (content, goWords) => {
    const message = await errorOf(content);
    expect(message).toContain(goWords);
    // axe's location prefix stays: the file, and the line when it is known.
    expect(message).toMatch(/agent\.toml(:\d+:\d+)?: /);
  });
});
