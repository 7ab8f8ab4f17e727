// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of agent files is what is under test
import { execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentSpec, McpServerSpec } from '../../internal/agent/spec.js';
import { ConfigError, RuntimeError } from '../../internal/errors.js';
import { createToolset } from '../../internal/tools/index.js';
import type { Toolset, ToolsetOptions } from '../../internal/tools/types.js';
import { startCountingServer } from './counting-server.js';
import { isRunning, toolContext, waitFor } from './helpers.js';

const EVERYTHING = join(process.cwd(), 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const PAGED = join(process.cwd(), 'test/tools/fixtures/paged-mcp-server.mjs');

function spec(mcpServers: McpServerSpec[], tools: string[] = []): AgentSpec {
  return { tools, disallowedTools: [], mcpServers } as unknown as AgentSpec;
}

type Reported = Parameters<ToolsetOptions['report']>[0];

async function open(
  servers: McpServerSpec[],
  options: { tools?: string[]; env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<{ toolset: Toolset; reports: Reported[] }> {
  const reports: Reported[] = [];
  const context = toolContext(process.cwd(), {
    env: { PATH: process.env.PATH, ...options.env },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const toolset = await createToolset({
    spec: spec(servers, options.tools),
    context,
    report: (e) => reports.push(e),
  });
  return { toolset, reports };
}

function tool(toolset: Toolset, name: string) {
  const found = toolset.tools.find((t) => t.spec.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** Pids of the stdio server processes this test process started. */
function childPids(): number[] {
  const out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0 && isRunning(n));
}

const ctx = () => toolContext(process.cwd());
const stdio = (
  name: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): McpServerSpec => ({
  name,
  transport: 'stdio',
  command,
  args,
  env,
});

describe('MCP over stdio (server-everything, a server nobody here wrote)', () => {
  it('lists the real tools with their schemas, calls them, and ends the process on close', async () => {
    const server = stdio('everything', process.execPath, [EVERYTHING, 'stdio'], {
      GREETING: '${MY_GREETING}',
    });
    const { toolset, reports } = await open([server], {
      tools: ['read_file'],
      env: { MY_GREETING: 'hi-there' },
    });
    const names = toolset.tools.map((t) => t.spec.name);
    expect(names[0]).toBe('read_file');
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-env']));
    expect(tool(toolset, 'get-sum').spec.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(reports).toContainEqual({
      type: 'mcp',
      server: 'everything',
      message: `connected (${names.length - 1} tools)`,
    });

    expect(await tool(toolset, 'echo').execute({ message: 'hello' }, ctx())).toEqual({
      content: 'Echo: hello',
      isError: false,
    });
    const image = await tool(toolset, 'get-tiny-image').execute({}, ctx());
    expect(image.content).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const env = await tool(toolset, 'get-env').execute({}, ctx());
    expect(env.content).toContain('"GREETING": "hi-there"');

    const pids = childPids();
    expect(pids.length).toBe(1);
    await toolset.close();
    expect(await waitFor(() => !isRunning(pids[0]!))).toBe(true);
  });

  it('kills the server when the run is aborted', async () => {
    const controller = new AbortController();
    const { toolset } = await open([stdio('everything', process.execPath, [EVERYTHING, 'stdio'])], {
      signal: controller.signal,
    });
    const [pid] = childPids();
    expect(pid && isRunning(pid)).toBe(true);
    controller.abort();
    expect(await waitFor(() => !isRunning(pid!))).toBe(true);
    await toolset.close();
  });
});

describe('MCP over stdio (paged fixture)', () => {
  it('follows nextCursor, keeps the built-in on a clash with a warning, describes non-text content', async () => {
    const { toolset, reports } = await open([stdio('paged', process.execPath, [PAGED])], {
      tools: ['read_file'],
    });
    try {
      expect(toolset.tools.map((t) => t.spec.name)).toEqual([
        'read_file',
        'shout',
        'mixed',
        'fails',
        'count',
      ]);
      expect(tool(toolset, 'read_file').spec.description).not.toBe('clashes with the built-in');
      expect(reports).toEqual([
        {
          type: 'warning',
          message:
            'mcp server "paged": tool "read_file" clashes with a tool already offered; keeping the first one',
        },
        { type: 'mcp', server: 'paged', message: 'connected (4 tools)' },
      ]);
      expect(await tool(toolset, 'count').execute({ a: 2, b: 3 }, ctx())).toEqual({
        content: '5',
        isError: false,
      });
      expect(await tool(toolset, 'fails').execute({}, ctx())).toEqual({
        content: 'it went wrong',
        isError: true,
      });
      expect((await tool(toolset, 'mixed').execute({}, ctx())).content).toBe(
        [
          'intro',
          '[image: image/png, 30 bytes]',
          '[audio: audio/wav, 10 bytes]',
          '[resource: file:///a.txt]',
          'resource text',
          '[resource: file:///b.bin, application/octet-stream, 3 bytes]',
          '[resource link: c <file:///c.txt>]',
        ].join('\n'),
      );
    } finally {
      await toolset.close();
    }
  });

  it('ends a server that ignores stdin EOF and SIGTERM', async () => {
    const { toolset } = await open([stdio('stubborn', process.execPath, [PAGED, 'stubborn'])]);
    const [pid] = childPids();
    const started = Date.now();
    await toolset.close();
    expect(await waitFor(() => !isRunning(pid!))).toBe(true);
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('connects several servers in parallel', async () => {
    const started = Date.now();
    const { toolset, reports } = await open([
      stdio('one', process.execPath, [PAGED]),
      stdio('two', process.execPath, [EVERYTHING, 'stdio']),
    ]);
    expect(reports.filter((r) => r.type === 'mcp').map((r) => (r.type === 'mcp' ? r.server : ''))).toEqual([
      'one',
      'two',
    ]);
    expect(childPids().length).toBe(2);
    await toolset.close();
    expect(childPids()).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

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

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startEverything(mode: 'streamableHttp' | 'sse'): Promise<{ port: number; stop: () => void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (/listening on port|running on port/.test(log)) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${log}`)));
  });
  return { port, stop: () => child.kill('SIGKILL') };
}

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
