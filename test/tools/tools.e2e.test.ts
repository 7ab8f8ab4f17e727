// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of agent files is what is under test
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm, RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { startFakeTavily } from '../fake-tavily/server.js';
import { AXE_BIN, REPO_ROOT, runAxe, startAxe, TempHome } from '../run/cli.js';
import { startCountingServer } from './counting-server.js';
import { isRunning, waitFor } from './helpers.js';

/**
 * Tools end to end: the built `axe` binary, an agent file, the fake LLM server scripting the tool
 * calls, and the results checked where the model receives them.
 */
const EVERYTHING = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const homes: TempHome[] = [];
const servers: FakeLlm[] = [];

async function setup(): Promise<{ home: TempHome; fake: FakeLlm; workdir: string }> {
  const home = new TempHome();
  const fake = await startFakeLlm();
  homes.push(home);
  servers.push(fake);
  const workdir = join(home.root, 'work');
  mkdirSync(workdir);
  return { home, fake, workdir };
}

beforeAll(() => {
  if (!existsSync(AXE_BIN)) throw new Error(`${AXE_BIN} is missing: run \`npm run build\` first`);
});
afterAll(async () => {
  await Promise.all(servers.map((fake) => fake.close()));
  for (const home of homes) home.cleanup();
});

/** Replies in order: one per model turn, whatever the request. */
function script(...turns: ScriptedReply[]): (request: RecordedRequest) => ScriptedReply {
  let turn = 0;
  return () => turns[Math.min(turn++, turns.length - 1)]!;
}

const mcpStdio = (name = 'everything') =>
  [
    '[[mcp_servers]]',
    `name = "${name}"`,
    `command = "${process.execPath}"`,
    `args = ["${EVERYTHING}", "stdio"]`,
  ].join('\n');

function agent(workdir: string, tools: string[], extra = ''): string {
  return [
    'name = "worker"',
    'model = "anthropic/claude-test"',
    'system_prompt = "ROLE:worker"',
    `workdir = "${workdir}"`,
    `tools = [${tools.map((t) => `"${t}"`).join(', ')}]`,
    extra,
  ].join('\n');
}

/** Pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

describe.concurrent('tools through axe run', () => {
  it('file tools and run_command: results reach the model unchanged; --json and --verbose report them', async () => {
    const { home, fake, workdir } = await setup();
    writeFileSync(join(workdir, 'notes.txt'), 'alpha\nbeta\n');
    home.agent(
      'worker',
      agent(workdir, ['read_file', 'write_file', 'edit_file', 'list_directory', 'run_command']),
    );
    fake.respond(
      script(
        { toolCalls: [{ name: 'write_file', arguments: { path: 'out/result.txt', content: 'hello' } }] },
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'notes.txt', offset: 2 } },
            {
              name: 'edit_file',
              arguments: { path: 'out/result.txt', old_string: 'hello', new_string: 'bye' },
            },
            { name: 'run_command', arguments: { command: 'echo "$ANTHROPIC_API_KEY"; exit 4' } },
            { name: 'read_file', arguments: { path: '../outside.txt' } },
          ],
        },
        { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] },
        { text: 'all done' },
      ),
    );
    const result = await runAxe(
      ['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--verbose'],
      {
        env: home.env(fake.url),
      },
    );
    expect(result.code).toBe(0);
    expect(fake.rejections).toEqual([]);
    const [, second, third, fourth] = fake.requests;
    expect(second?.toolResults.slice(-1)).toEqual([
      expect.objectContaining({ content: 'wrote 5 bytes to out/result.txt', isError: false }),
    ]);
    expect(third?.toolResults.slice(-4).map((r) => [r.content, r.isError])).toEqual([
      ['2: beta', false],
      ['replaced 1 occurrence in out/result.txt', false],
      ['exit code 4\n\n', true],
      [`path "../outside.txt" escapes the workdir (${workdir})`, true],
    ]);
    expect(fourth?.toolResults.at(-1)?.content).toBe('notes.txt\nout/');
    expect(readFileSync(join(workdir, 'out/result.txt'), 'utf8')).toBe('bye');

    const envelope = JSON.parse(result.stdout) as { tool_call_details: Record<string, unknown>[] };
    const firstTurn = Number(envelope.tool_call_details[0]?.turn);
    expect(envelope.tool_call_details.map((d) => [d.name, d.is_error, Number(d.turn) - firstTurn])).toEqual([
      ['write_file', false, 0],
      ['read_file', false, 1],
      ['edit_file', false, 1],
      ['run_command', true, 1],
      ['read_file', true, 1],
      ['list_directory', false, 2],
    ]);
    expect(envelope.tool_call_details[1]).toMatchObject({
      input: { path: 'notes.txt', offset: 2 },
      output: '2: beta',
    });
    expect(result.stderr).toMatch(/\[tool\] write_file: .*out\/result\.txt.* \(success\)/);
    expect(result.stderr).toMatch(/\[tool\] run_command: .* \(error\)/);
    expect(result.stderr).not.toContain('test-key');
  });

  it('url_fetch and web_search: results reach the model; allowed_hosts is enforced', async () => {
    const { home, fake, workdir } = await setup();
    const tavily = await startFakeTavily('tvly-e2e');
    const page = await startCountingServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<p>Hello <b>page</b></p>');
    });
    try {
      home.agent('worker', agent(workdir, ['url_fetch', 'web_search'], 'allowed_hosts = ["127.0.0.1"]'));
      fake.respond(
        script(
          {
            toolCalls: [
              { name: 'url_fetch', arguments: { url: `${page.url}/` } },
              { name: 'url_fetch', arguments: { url: `http://localhost:${page.port}/` } },
              { name: 'web_search', arguments: { query: 'axe', max_results: 1 } },
            ],
          },
          { text: 'ok' },
        ),
      );
      const env = home.env(fake.url, {
        AXE_ALLOW_PRIVATE_HOSTS: '1',
        TAVILY_API_KEY: 'tvly-e2e',
        AXE_TAVILY_BASE_URL: tavily.url,
      });
      const result = await runAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
      expect(result.code).toBe(0);
      expect(fake.requests[1]?.toolResults.map((r) => [r.content, r.isError])).toEqual([
        ['Hello page', false],
        [`url_fetch refused http://localhost:${page.port}/: host "localhost" is not in allowed_hosts`, true],
        ['1. Result 1 for axe\n   https://example.com/1\n   Snippet 1 about axe.', false],
      ]);
      expect(page.connections()).toBe(1);
    } finally {
      await Promise.all([tavily.close(), page.close()]);
    }
  });

  it('an MCP server over stdio: tools offered with their schemas, called, and the process gone after the run', async () => {
    const { home, fake, workdir } = await setup();
    home.agent('worker', agent(workdir, [], mcpStdio()));
    fake.respond(
      script({ toolCalls: [{ name: 'get-sum', arguments: { a: 19, b: 23 } }] }, { text: 'the sum is 42' }),
    );
    const running = startAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'add', '--verbose'], {
      env: home.env(fake.url),
    });
    let mcpPid = 0;
    await waitFor(() => {
      mcpPid = childrenOf(running.pid)[0] ?? 0;
      return mcpPid > 0 || !isRunning(running.pid);
    }, 10_000);
    const result = await running.done;
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('the sum is 42');
    expect(fake.requests[0]?.toolNames).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']),
    );
    const body = fake.requests[0]?.body as { tools: { name: string; input_schema: unknown }[] };
    expect(body.tools.find((t) => t.name === 'get-sum')?.input_schema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(fake.requests[1]?.toolResults[0]).toMatchObject({
      content: 'The sum of 19 and 23 is 42.',
      isError: false,
    });
    expect(result.stderr).toMatch(/\[mcp\] everything: connected \(\d+ tools\)/);
    expect(result.stderr).toMatch(/\[tool\] get-sum: .* \(success\)/);
    expect(mcpPid).toBeGreaterThan(0);
    expect(isRunning(mcpPid)).toBe(false);
  });

  for (const [how, args, signal, code] of [
    ['Ctrl-C', [], 'SIGINT', 130],
    ['a timeout', ['--timeout', '3'], undefined, 3],
  ] as const) {
    it(`no MCP server process survives ${how}`, async () => {
      const { home, fake, workdir } = await setup();
      home.agent('worker', agent(workdir, [], mcpStdio()));
      fake.respond(() => ({ fault: { kind: 'hang' } }));
      const running = startAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x', ...args], {
        env: home.env(fake.url),
      });
      let mcpPid = 0;
      await waitFor(() => {
        mcpPid = childrenOf(running.pid)[0] ?? 0;
        return mcpPid > 0;
      }, 10_000);
      expect(mcpPid).toBeGreaterThan(0);
      if (signal) {
        await waitFor(() => fake.requests.length > 0, 10_000);
        running.kill(signal);
      }
      const result = await running.done;
      expect(result.code).toBe(code);
      expect(await waitFor(() => !isRunning(mcpPid), 3000)).toBe(true);
    });
  }

  it('a missing ${VAR} in an MCP server env is exit 2 naming it', async () => {
    const { home, fake, workdir } = await setup();
    home.agent('worker', agent(workdir, [], `${mcpStdio()}\nenv = { TOKEN = "\${NO_SUCH_TOKEN}" }`));
    const result = await runAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('NO_SUCH_TOKEN');
    expect(fake.requests).toEqual([]);
  });
});
