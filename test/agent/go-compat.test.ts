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
