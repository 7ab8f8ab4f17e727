// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of agent files is what is under test
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../fake-llm/types.js';
import { runAxe, startAxe } from '../run/cli.js';
import { agentToml as agent, script, toolCallDetails, useE2e } from './e2e-helpers.js';
import { descendantsOf, isRunning, waitFor } from './helpers.js';
import { EVERYTHING, PAGED, shWrapped, startEverything, startMute } from './mcp-servers.js';

/**
 * MCP servers used by an agent through the built `axe` binary: server-everything (a real server
 * nobody here wrote) over stdio — started through an `sh -c` wrapper, as `npx` / `uvx` do — and
 * over streamable HTTP. The model (the fake LLM server) lists and calls its tools; no server
 * process may outlive the run.
 */
const setup = useE2e();

/** `[[mcp_servers]]` for a stdio server behind `sh -c`. */
function wrappedServer(name: string, script: string, ...args: string[]): string {
  const wrapped = shWrapped(script, ...args);
  return [
    '[[mcp_servers]]',
    `name = "${name}"`,
    `command = "${wrapped.command}"`,
    `args = ${JSON.stringify(wrapped.args)}`,
  ].join('\n');
}

/** Waits until axe has started `count` processes (wrappers and servers); returns their pids. */
async function serverTree(axePid: number, count: number): Promise<number[]> {
  let tree: number[] = [];
  await waitFor(() => {
    tree = descendantsOf(axePid);
    return tree.length >= count || !isRunning(axePid);
  }, 10_000);
  return tree;
}

describe.concurrent('MCP servers through axe run', () => {
  it('stdio behind a wrapper: tools offered with their schemas, called, results returned, no process left', async () => {
    const { home, fake, workdir } = await setup();
    home.agent('worker', agent(workdir, [], wrappedServer('everything', EVERYTHING, 'stdio')));
    fake.respond(
      script(
        { toolCalls: [{ name: 'get-sum', arguments: { a: 19, b: 23 } }] },
        { toolCalls: [{ name: 'echo', arguments: { message: 'hi' } }] },
        { text: 'the sum is 42' },
      ),
    );
    const running = startAxe(
      ['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'add', '--verbose', '--json'],
      { env: home.env(fake.url) },
    );
    const tree = await serverTree(running.pid, 2);
    const result = await running.done;
    expect(result.code).toBe(0);
    expect(tree.length).toBe(2);
    expect(tree.every((pid) => !isRunning(pid))).toBe(true);

    expect(fake.requests[0]?.toolNames).toEqual(
      expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']),
    );
    const body = fake.requests[0]?.body as { tools: { name: string; input_schema: unknown }[] };
    expect(body.tools.find((t) => t.name === 'get-sum')?.input_schema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(fake.requests[1]?.toolResults.at(-1)).toMatchObject({
      content: 'The sum of 19 and 23 is 42.',
      isError: false,
    });
    expect(fake.requests[2]?.toolResults.at(-1)).toMatchObject({ content: 'Echo: hi', isError: false });
    expect(toolCallDetails(result.stdout).map((d) => [d.name, d.output, d.is_error])).toEqual([
      ['get-sum', 'The sum of 19 and 23 is 42.', false],
      ['echo', 'Echo: hi', false],
    ]);
    expect(result.stderr).toMatch(/^\[mcp\] everything: connected \(\d+ tools\)$/m);
    expect(result.stderr).toContain('[tool] get-sum: {"a":19,"b":23} (success)');
  });

  it('streamable HTTP: tools listed, called by the model, results returned', async () => {
    const { home, fake, workdir } = await setup();
    const server = await startEverything('streamableHttp');
    try {
      const mcp = ['[[mcp_servers]]', 'name = "remote"', `url = "http://127.0.0.1:${server.port}/mcp"`];
      home.agent('worker', agent(workdir, [], mcp.join('\n')));
      fake.respond(
        script({ toolCalls: [{ name: 'get-sum', arguments: { a: 2, b: 40 } }] }, { text: 'forty-two' }),
      );
      const running = startAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'add', '--verbose'], {
        env: home.env(fake.url),
      });
      const result = await running.done;
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('forty-two');
      expect(fake.requests[0]?.toolNames).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(fake.requests[1]?.toolResults).toEqual([
        expect.objectContaining({ content: 'The sum of 2 and 40 is 42.', isError: false }),
      ]);
      expect(result.stderr).toMatch(/^\[mcp\] remote: connected \(\d+ tools\)$/m);
      expect(result.stderr).toContain('[tool] get-sum: {"a":2,"b":40} (success)');
    } finally {
      server.stop();
    }
  });

  it('a sub-agent connects its own servers; the lead does not get their tools', async () => {
    const { home, fake, workdir } = await setup();
    const lead = agent(workdir, [])
      .replace('name = "worker"', 'name = "lead"')
      .replace('ROLE:worker', 'ROLE:lead');
    home.agent('lead', `${lead}\nsub_agents = ["worker"]`);
    home.agent('worker', agent(workdir, [], wrappedServer('paged', PAGED)));
    fake.respond((request) => {
      const role = request.system.includes('ROLE:lead') ? 'lead' : 'worker';
      if (request.toolResults.length > 0)
        return { text: `${role} saw ${request.toolResults.at(-1)?.content}` };
      return role === 'lead'
        ? { toolCalls: [{ name: 'call_agent', arguments: { agent: 'worker', task: 'count' } }] }
        : { toolCalls: [{ name: 'count', arguments: { a: 20, b: 22 } }] };
    });
    const running = startAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--verbose'], {
      env: home.env(fake.url),
    });
    const tree = await serverTree(running.pid, 2);
    expect(tree.length).toBe(2);
    const result = await running.done;
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('lead saw worker saw 42');
    const offered = (role: string) => fake.requests.find((r) => r.system.includes(role))?.toolNames;
    expect(offered('ROLE:lead')).toEqual(['call_agent']);
    expect(offered('ROLE:worker')).toEqual(expect.arrayContaining(['shout', 'count']));
    expect(result.stderr).toMatch(/^\[mcp\] paged: connected \(6 tools\)$/m);
    expect(tree.every((pid) => !isRunning(pid))).toBe(true);
  });

  it('a server env value whatever its name is a secret: a tool that prints its environment shows *** in every output', async () => {
    const { home, fake, workdir } = await setup();
    // Neither name says "secret"; the second value comes from the environment.
    const dbUrl = 'postgres://admin:hunter22@db.internal:5432/app';
    const region = 'eu-north-region-7';
    const server = `${wrappedServer('everything', EVERYTHING, 'stdio')}\nenv = { DB_URL = "${dbUrl}", PLACE = "\${THE_PLACE}", MODE = "short" }`;
    home.agent('worker', agent(workdir, [], server));
    fake.respond(script({ toolCalls: [{ name: 'get-env', arguments: {} }] }, { text: 'done' }));
    const events = `${home.root}/events.jsonl`;
    const env = home.env(fake.url, { THE_PLACE: region });
    const result = await runAxe(
      ['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x', '--json', '--verbose', '--events', events],
      { env },
    );
    expect(result.code).toBe(0);
    // The model is given the tool's output as it is; only what axe writes is masked.
    expect(fake.requests[1]?.toolResults[0]?.content).toContain(dbUrl);
    const [detail] = toolCallDetails(result.stdout);
    expect(detail?.output).toContain('"DB_URL": "***"');
    expect(detail?.output).toContain('"PLACE": "***"');
    // Under 8 characters: ordinary text, left alone.
    expect(detail?.output).toContain('"MODE": "short"');
    const html = await runAxe(['runs', 'show', 'last', '--html'], { env });
    const transcript = await runAxe(['runs', 'show', 'last', '--transcript', 'worker'], { env });
    expect(html.stdout).toContain('DB_URL');
    expect(transcript.stdout).toContain('DB_URL');
    const recorded = readdirSync(home.runsDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
    const written = [
      result.stdout,
      result.stderr,
      readFileSync(events, 'utf8'),
      html.stdout,
      transcript.stdout,
    ];
    for (const text of [...written, ...recorded]) {
      expect(text).not.toContain('hunter22');
      expect(text).not.toContain(region);
    }
  });

  it('a missing ${VAR} in a server env or header is exit 2, one line naming it, nothing started', async () => {
    const { home, fake, workdir } = await setup();
    const stdioServer = `${wrappedServer('everything', EVERYTHING, 'stdio')}\nenv = { TOKEN = "\${NO_SUCH_TOKEN}" }`;
    const httpServer =
      '[[mcp_servers]]\nname = "remote"\nurl = "http://127.0.0.1:9/mcp"\nheaders = { Authorization = "Bearer ${NO_SUCH_HEADER}" }';
    for (const [server, expected] of [
      [
        stdioServer,
        'axe: mcp server "everything" env TOKEN: environment variable NO_SUCH_TOKEN is not set (referenced as ${NO_SUCH_TOKEN})\n',
      ],
      [
        httpServer,
        'axe: mcp server "remote" header Authorization: environment variable NO_SUCH_HEADER is not set (referenced as ${NO_SUCH_HEADER})\n',
      ],
    ]) {
      home.agent('worker', agent(workdir, [], server));
      const running = startAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x'], {
        env: home.env(fake.url),
      });
      const result = await running.done;
      expect(result).toMatchObject({ code: 2, stdout: '', stderr: expected });
    }
    expect(fake.requests).toEqual([]);
  });

  it('an SSE server that never sends its endpoint: the deadline ends the run, exit 3, not a silent 0', async () => {
    const { home, fake, workdir } = await setup();
    const mute = await startMute('headers');
    try {
      const mcp = ['[[mcp_servers]]', 'name = "mute"', 'transport = "sse"', `url = "${mute.url}/sse"`];
      home.agent('worker', agent(workdir, [], mcp.join('\n')));
      // The server never sends its endpoint: the run ends at all only by its deadline.
      const result = await runAxe(
        ['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x', '--timeout', '2'],
        {
          env: home.env(fake.url),
        },
      );
      expect(result).toMatchObject({ code: 3, stdout: '', stderr: 'axe: timeout after 2s\n' });
      expect(fake.requests).toEqual([]);
    } finally {
      await mute.close();
    }
  });

  const endings: [
    how: string,
    args: string[],
    reply: ScriptedReply,
    signal: NodeJS.Signals | undefined,
    code: number,
  ][] = [
    ['Ctrl-C', [], { fault: { kind: 'hang' } }, 'SIGINT', 130],
    ['SIGTERM', [], { fault: { kind: 'hang' } }, 'SIGTERM', 143],
    ['SIGHUP', [], { fault: { kind: 'hang' } }, 'SIGHUP', 129],
    // Long enough for the four server processes to be up before the deadline on a loaded CI machine.
    ['a timeout', ['--timeout', '5'], { fault: { kind: 'hang' } }, undefined, 3],
    ['a provider error', [], { delayMs: 300, fault: { kind: 'status', status: 401 } }, undefined, 3],
  ];
  for (const [how, args, reply, signal, code] of endings) {
    it(`no stdio server process (wrapper or server, even a stubborn one) survives ${how}`, async () => {
      const { home, fake, workdir } = await setup();
      const servers = [
        wrappedServer('everything', EVERYTHING, 'stdio'),
        wrappedServer('stubborn', PAGED, 'stubborn'),
      ];
      home.agent('worker', agent(workdir, [], servers.join('\n')));
      fake.respond(() => reply);
      const running = startAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'x', ...args], {
        env: home.env(fake.url),
      });
      const tree = await serverTree(running.pid, 4);
      expect(tree.length).toBe(4);
      if (signal) {
        await waitFor(() => fake.requests.length > 0, 10_000);
        running.kill(signal);
      }
      const result = await running.done;
      expect(result.code).toBe(code);
      expect(result.stdout).toBe('');
      expect(await waitFor(() => tree.every((pid) => !isRunning(pid)), 1500)).toBe(true);
    });
  }
});
