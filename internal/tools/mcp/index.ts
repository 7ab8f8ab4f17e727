import type { McpServerSpec } from '../../agent/spec.js';
import { RuntimeError } from '../../errors.js';
import { killChild, trackChild, untrackChild } from '../child-reaper.js';
import { defineTool } from '../define-tool.js';
import type { Tool, ToolContext } from '../types.js';
import { mcpResultToOutput, toInputSchema } from './content.js';
import { expandRecord } from './expand.js';

/** One connected MCP server: its tools and how to end the connection (and its process). */
export interface McpConnection {
  server: string;
  tools: Tool[];
  close(): Promise<void>;
}

const CONNECT_TIMEOUT_MS = 30_000;
const CALL_TIMEOUT_MS = 10 * 60_000;
const MAX_LIST_PAGES = 100;
const STDERR_TAIL_BYTES = 2000;

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** The SDK is loaded only here, only when an agent declares MCP servers. */
async function loadSdk() {
  const [client, stdio, streamable, sse] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
  ]);
  return {
    Client: client.Client,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
    SSEClientTransport: sse.SSEClientTransport,
  };
}

/**
 * Connects every server in parallel. `${VAR}` references are expanded first, so a missing
 * variable fails (ConfigError) before any process starts. If one server fails, the others are
 * closed and a RuntimeError names the failing server.
 */
export async function connectMcpServers(
  servers: McpServerSpec[],
  context: ToolContext,
): Promise<McpConnection[]> {
  const prepared = servers.map((server) => prepare(server, context.env));
  const sdk = await loadSdk();
  const settled = await Promise.allSettled(prepared.map((server) => connectOne(sdk, server, context)));
  const connected = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) {
    await Promise.all(connected.map((c) => c.close()));
    throw failure.reason;
  }
  return connected;
}

function prepare(server: McpServerSpec, env: NodeJS.ProcessEnv): McpServerSpec {
  const where = (kind: string) => (key: string) => `mcp server "${server.name}" ${kind} ${key}`;
  return server.transport === 'stdio'
    ? { ...server, env: expandRecord(server.env, env, where('env')) }
    : { ...server, headers: expandRecord(server.headers, env, where('header')) };
}

async function connectOne(sdk: Sdk, server: McpServerSpec, context: ToolContext): Promise<McpConnection> {
  const client = new sdk.Client({ name: 'axe', version: '0.1.0' });
  let stderrTail = '';
  let pid: number | undefined;
  let transport:
    | InstanceType<Sdk['StdioClientTransport']>
    | InstanceType<Sdk['SSEClientTransport']>
    | InstanceType<Sdk['StreamableHTTPClientTransport']>;
  if (server.transport === 'stdio') {
    const stdio = new sdk.StdioClientTransport({
      command: server.command,
      args: server.args,
      env: server.env,
      cwd: context.workdir,
      stderr: 'pipe',
    });
    stdio.stderr?.on('data', (chunk: Buffer) => {
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
    });
    transport = stdio;
  } else {
    const init = { requestInit: { headers: server.headers } };
    transport =
      server.transport === 'sse'
        ? new sdk.SSEClientTransport(new URL(server.url), init)
        : new sdk.StreamableHTTPClientTransport(new URL(server.url), init);
  }

  const stdioPid = () =>
    'pid' in transport && typeof transport.pid === 'number' ? transport.pid : undefined;
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= closeClient(client, pid ?? stdioPid());
    return closed;
  };
  const onAbort = () => void close();
  context.signal.addEventListener('abort', onAbort, { once: true });

  try {
    const options = { signal: context.signal, timeout: CONNECT_TIMEOUT_MS };
    await client.connect(transport, options);
    pid = stdioPid();
    if (pid !== undefined) trackChild(pid, 'process');
    const tools = await listAllTools(client, options);
    return {
      server: server.name,
      tools: tools.map((tool) => toTool(client, tool)),
      close: async () => {
        context.signal.removeEventListener('abort', onAbort);
        await close();
      },
    };
  } catch (error) {
    await close();
    const detail = stderrTail.trim()
      ? ` (stderr: ${stderrTail.trim().split('\n').slice(-3).join(' | ')})`
      : '';
    throw new RuntimeError(
      `mcp server "${server.name}": cannot connect: ${(error as Error).message}${detail}`,
      {
        cause: error,
      },
    );
  }
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
}

async function listAllTools(
  client: InstanceType<Sdk['Client']>,
  options: { signal: AbortSignal; timeout: number },
): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await client.listTools(cursor === undefined ? {} : { cursor }, options);
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) return tools;
  }
  throw new Error(`tools/list did not end after ${MAX_LIST_PAGES} pages`);
}

function toTool(client: InstanceType<Sdk['Client']>, tool: ListedTool): Tool {
  return defineTool(
    { name: tool.name, description: tool.description ?? '', parameters: toInputSchema(tool.inputSchema) },
    async (args, context) => {
      const result = await client.callTool({ name: tool.name, arguments: args }, undefined, {
        signal: context.signal,
        timeout: CALL_TIMEOUT_MS,
        resetTimeoutOnProgress: true,
      });
      return mcpResultToOutput(result);
    },
  );
}

/**
 * Ends the connection. For stdio the SDK closes stdin and waits up to 2 s before SIGTERM; a
 * server that ignores EOF is terminated sooner here, and SIGKILLed if SIGTERM is not enough.
 */
async function closeClient(client: InstanceType<Sdk['Client']>, pid: number | undefined): Promise<void> {
  const timers =
    pid === undefined
      ? []
      : [
          setTimeout(() => killChild(pid, 'process', 'SIGTERM'), 300),
          setTimeout(() => killChild(pid, 'process', 'SIGKILL'), 1000),
        ];
  try {
    await client.close();
  } catch {
    // Closing a broken connection: nothing more to do.
  } finally {
    for (const timer of timers) clearTimeout(timer);
    if (pid !== undefined) {
      if (isAlive(pid)) killChild(pid, 'process');
      untrackChild(pid);
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
