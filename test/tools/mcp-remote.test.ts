// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of agent files is what is under test
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerSpec } from '../../internal/agent/spec.js';
import { ConfigError, RuntimeError } from '../../internal/errors.js';
import { connectMcpServers } from '../../internal/tools/mcp/index.js';
import { startCountingServer } from './counting-server.js';
import { toolContext, waitFor } from './helpers.js';
import { PAGED, startEverything, startMute } from './mcp-servers.js';
import { childPids, ctx, open, stdio, tool } from './mcp-toolset.js';

/** MCP configuration errors, and the HTTP transports (streamable HTTP, SSE) through createToolset. */
describe('MCP configuration errors', () => {
  it('a missing ${VAR} is a ConfigError naming it, before any process starts', async () => {
    const server = stdio('s', process.execPath, [PAGED], { TOKEN: 'Bearer ${NOT_SET_ANYWHERE}' });
    const error = await open([server]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as Error).message).toBe(
      'mcp server "s" env TOKEN: environment variable NOT_SET_ANYWHERE is not set (referenced as ${NOT_SET_ANYWHERE})',
    );
    expect(childPids()).toEqual([]);
  });

  it('a header ${VAR} is checked the same way', async () => {
    const server: McpServerSpec = {
      name: 'h',
      transport: 'streamable-http',
      url: 'http://127.0.0.1:9/mcp',
      headers: { Authorization: 'Bearer ${MISSING_TOKEN}' },
    };
    await expect(open([server])).rejects.toThrow(
      'mcp server "h" header Authorization: environment variable MISSING_TOKEN',
    );
  });

  it('sends the expanded header values; an unreachable endpoint is a RuntimeError naming the server', async () => {
    const seen: (string | undefined)[] = [];
    const endpoint = await startCountingServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end('{"error":"unauthorized"}');
    });
    try {
      const server: McpServerSpec = {
        name: 'remote',
        transport: 'streamable-http',
        url: `${endpoint.url}/mcp`,
        headers: { Authorization: 'Bearer ${MCP_TOKEN}' },
      };
      const error = await open([server], { env: { MCP_TOKEN: 't0k3n' } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(RuntimeError);
      expect((error as Error).message).toMatch(/^mcp server "remote": cannot connect: /);
      expect(seen[0]).toBe('Bearer t0k3n');
    } finally {
      await endpoint.close();
    }
    const closed: McpServerSpec = {
      name: 'gone',
      transport: 'streamable-http',
      url: endpoint.url,
      headers: {},
    };
    await expect(open([closed])).rejects.toThrow(/^mcp server "gone": cannot connect: .*ECONNREFUSED/);
  });

  it('a server that cannot start is a RuntimeError naming it; the others are closed', async () => {
    const error = await open([
      stdio('good', process.execPath, [PAGED]),
      stdio('bad', process.execPath, ['-e', 'console.error("boom: no config"); process.exit(1)']),
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toMatch(/^mcp server "bad": cannot connect: .*boom: no config/);
    expect(await waitFor(() => childPids().length === 0)).toBe(true);
  });
});

describe.each([
  ['streamable-http', 'streamableHttp', '/mcp'],
  ['sse', 'sse', '/sse'],
] as const)('MCP over %s (server-everything)', (transport, mode, path) => {
  let server: Awaited<ReturnType<typeof startEverything>>;
  beforeAll(async () => {
    server = await startEverything(mode);
  });
  afterAll(() => server.stop());

  it('lists and calls tools', async () => {
    const spec: McpServerSpec = {
      name: 'remote',
      transport,
      url: `http://127.0.0.1:${server.port}${path}`,
      headers: { 'X-Test': '${HEADER_VALUE}' },
    };
    const { toolset, reports } = await open([spec], { env: { HEADER_VALUE: 'v1' } });
    try {
      expect(toolset.tools.map((t) => t.spec.name)).toEqual(expect.arrayContaining(['echo', 'get-sum']));
      expect(reports.at(-1)).toMatchObject({ type: 'mcp', server: 'remote' });
      expect(await tool(toolset, 'get-sum').execute({ a: 2, b: 40 }, ctx())).toEqual({
        content: 'The sum of 2 and 40 is 42.',
        isError: false,
      });
    } finally {
      await toolset.close();
    }
  });
});

/** connectMcpServers to one server at `url`; how long it took, and what it threw. */
async function connectTo(
  transport: 'sse' | 'streamable-http',
  url: string,
  options: { signal?: AbortSignal; connectTimeoutMs?: number },
): Promise<{ error: unknown; ms: number }> {
  const server: McpServerSpec = { name: 'mute', transport, url, headers: {} };
  const context = toolContext(process.cwd(), options.signal ? { signal: options.signal } : {});
  const started = Date.now();
  const error = await connectMcpServers([server], context, options).then(
    (connections) => Promise.all(connections.map((c) => c.close())),
    (e: unknown) => e,
  );
  return { error, ms: Date.now() - started };
}

describe.each([
  ['sse', 'silent'],
  ['sse', 'headers'],
  ['streamable-http', 'silent'],
] as const)('MCP over %s to a server that never answers (%s)', (transport, mode) => {
  let mute: Awaited<ReturnType<typeof startMute>>;
  beforeAll(async () => {
    mute = await startMute(mode);
  });
  afterAll(() => mute.close());

  it('the connect timeout is a RuntimeError naming the server; its request is ended', async () => {
    const { error, ms } = await connectTo(transport, `${mute.url}/sse`, { connectTimeoutMs: 300 });
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toBe('mcp server "mute": cannot connect: no answer within 0.3s');
    // The server never answers: that the connect ended at all is the timeout's doing (the message
    // says which), and not before it was due.
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(await waitFor(() => mute.pending() === 0)).toBe(true);
  });

  it("an abort of the run's signal while connecting rejects at once; its request is ended", async () => {
    // Aborted once the server holds the request; with no connect timeout short enough to end it
    // within the test's, only the abort can (and the message says it did).
    const controller = new AbortController();
    const connecting = connectTo(transport, `${mute.url}/sse`, {
      signal: controller.signal,
      connectTimeoutMs: 600_000,
    });
    expect(await waitFor(() => mute.pending() > 0)).toBe(true);
    controller.abort(new Error('run cancelled'));
    const { error } = await connecting;
    expect(error).toBeInstanceOf(RuntimeError);
    expect((error as Error).message).toBe('mcp server "mute": cannot connect: run cancelled');
    expect(await waitFor(() => mute.pending() === 0)).toBe(true);
  });
});
