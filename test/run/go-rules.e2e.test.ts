import { describe, expect, it } from 'vitest';
import { e2eHomes, lines, runAxe } from './cli.js';

/** Go axe's loading rules through the built binary: accept what it accepts, refuse what it refuses. */
const setup = e2eHomes();
const agent = (model: string, ...lines: string[]) =>
  [`name = "g"`, `model = "${model}"`, ...lines, ''].join('\n');

describe.concurrent('Go axe loading rules', () => {
  it('refuses an unknown or injected tool name and duplicate MCP server names: exit 2, Go words, no request', async () => {
    const { home, fake } = await setup();
    const cases: [string, RegExp][] = [
      [agent('anthropic/m', 'tools = ["bogus"]'), /tools\[0\]: unknown tool "bogus" in tools config/],
      [
        agent('anthropic/m', 'tools = ["call_agent"]'),
        /tools\[0\]: unknown tool "call_agent" in tools config/,
      ],
      [
        agent(
          'anthropic/m',
          '[[mcp_servers]]\nname = "a"\nurl = "http://127.0.0.1:1/mcp"\n[[mcp_servers]]\nname = "a"\nurl = "http://127.0.0.1:2/mcp"',
        ),
        /mcp_servers\[1\]\.name: mcp_servers names must be unique: "a"/,
      ],
    ];
    for (const [toml, message] of cases) {
      home.agent('g', toml);
      const result = await runAxe(['run', 'g', '--agents-dir', home.agentsDir, '-p', 'x'], {
        env: home.env(fake.url),
      });
      expect(result.code).toBe(2);
      expect(lines(result.stderr)).toEqual([expect.stringMatching(message)]);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('accepts what Go accepts: an unknown key (warned), max_tokens = 0 (not sent), many retries, artifacts.default_write', async () => {
    const { home, fake } = await setup();
    home.agent(
      'g',
      agent(
        'openai/gpt-x',
        'colour = "red"',
        '[params]\nmax_tokens = 0',
        '[retry]\nmax_retries = 25',
        '[artifacts]\ndefault_write = true',
      ),
    );
    fake.enqueue({ text: 'fine' });
    const result = await runAxe(['run', 'g', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'fine' });
    expect(lines(result.stderr)).toEqual([
      expect.stringMatching(/g\.toml:3:1: colour: unknown field, ignored$/),
    ]);
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('max_completion_tokens');
  });
});
