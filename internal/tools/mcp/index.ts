import { followParent, untilAborted, withTimeout } from '../../abort.js';
import type { McpServerSpec } from '../../agent/spec.js';
import { RuntimeError } from '../../errors.js';
import { VERSION } from '../../version.js';
import { defineTool } from '../define-tool.js';
import { asRecord } from '../record.js';
import type { Tool, ToolContext } from '../types.js';
import { mcpResultToOutput, toInputSchema } from './content.js';
import { expandRecord } from './expand.js';
import { ANSWER_TOO_LARGE, ProcessGroupStdioTransport } from './stdio-transport.js';

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
const INHERITED_ENV = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER'] as const;

type Sdk = Awaited<ReturnType<typeof loadSdk>>;
type Client = InstanceType<Sdk['Client']>;
type Transport = Parameters<Client['connect']>[0];

export interface ConnectOptions {
  /** How long connecting (the transport's start and `initialize`) may take; 30 s by default. */
  connectTimeoutMs?: number;
}

/** The SDK is loaded only here, only when an agent declares MCP servers. */
async function loadSdk() {
  const [client, streamable, sse] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
  ]);
  return {
    Client: client.Client,
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
  { connectTimeoutMs = CONNECT_TIMEOUT_MS }: ConnectOptions = {},
): Promise<McpConnection[]> {
  const prepared = servers.map((server) => prepare(server, context.env));
  const sdk = await loadSdk();
  const settled = await Promise.allSettled(
    prepared.map((server) => connectOne(sdk, server, context, connectTimeoutMs)),
  );
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

async function connectOne(
  sdk: Sdk,
  server: McpServerSpec,
  context: ToolContext,
  connectTimeoutMs: number,
): Promise<McpConnection> {
  const client = new sdk.Client({ name: 'axe', version: VERSION });
  let stderrTail = '';
  const transport =
    server.transport === 'stdio'
      ? new ProcessGroupStdioTransport({
          command: server.command,
          args: server.args,
          env: {
            ...inheritedEnv(context.env),
            ...(context.traceparent !== undefined ? { TRACEPARENT: context.traceparent } : {}),
            ...server.env,
          },
          cwd: context.workdir,
          onStderr: (chunk) => {
            stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_BYTES);
          },
        })
      : server.transport === 'sse'
        ? new sdk.SSEClientTransport(new URL(server.url), { requestInit: { headers: server.headers } })
        : new sdk.StreamableHTTPClientTransport(new URL(server.url), {
            requestInit: { headers: server.headers },
          });

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= client.close().catch(() => {});
    return closed;
  };
  const onAbort = () => void close();
  context.signal.addEventListener('abort', onAbort, { once: true });

  try {
    await connectWithin(client, transport, context.signal, connectTimeoutMs);
    const tools = await listAllTools(client, context.signal);
    return {
      server: server.name,
      tools: tools.map((tool) => toTool(client, tool, (error) => callFailure(server.name, transport, error))),
      close: async () => {
        context.signal.removeEventListener('abort', onAbort);
        await close();
      },
    };
  } catch (error) {
    context.signal.removeEventListener('abort', onAbort);
    // A transport that never started is not closed by the client: end it here too.
    await Promise.all([close(), transport.close().catch(() => {})]);
    const detail = stderrTail.trim()
      ? ` (stderr: ${stderrTail.trim().split('\n').slice(-3).join(' | ')})`
      : '';
    throw new RuntimeError(`mcp server "${server.name}": cannot connect: ${describeError(error)}${detail}`, {
      cause: error,
    });
  }
}

/**
 * `client.connect` bounded as a whole by `ms` and the run's signal. The SDK applies its `signal`
 * and `timeout` to `initialize` only; the transport's `start()` comes first, and for an SSE server
 * that never sends its `endpoint` event it never settles — not even once the transport is closed
 * (eventsource reports no error for a close). The caller closes the transport when this throws.
 */
async function connectWithin(client: Client, transport: Transport, runSignal: AbortSignal, ms: number) {
  const { signal, timedOut, dispose } = withTimeout(runSignal, ms);
  try {
    await untilAborted(client.connect(transport, { signal, timeout: ms }), signal);
  } catch (error) {
    if (timedOut()) throw new Error(`no answer within ${ms / 1000}s`);
    throw error;
  } finally {
    dispose();
  }
}

/** The error's message and, for a bare `fetch failed`, the network error underneath. */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? error.cause.message : '';
  return cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message;
}

/** What a stdio server inherits besides its own `env` (the SDK's default list): no API keys. */
function inheritedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const inherited: Record<string, string> = {};
  for (const key of INHERITED_ENV) {
    const value = env[key];
    if (value !== undefined && !value.startsWith('()')) inherited[key] = value;
  }
  return inherited;
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: unknown;
  annotations?: { readOnlyHint?: boolean };
}

async function listAllTools(client: Client, runSignal: AbortSignal): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const params = cursor === undefined ? {} : { cursor };
    const result = await ownSignal(runSignal, (signal) =>
      client.listTools(params, { signal, timeout: CONNECT_TIMEOUT_MS }),
    );
    tools.push(...result.tools);
    cursor = result.nextCursor;
    if (!cursor) return tools;
  }
  throw new Error(`tools/list did not end after ${MAX_LIST_PAGES} pages`);
}

function toTool(client: Client, tool: ListedTool, failure: (error: unknown) => Error): Tool {
  const defined = defineTool(
    { name: tool.name, description: tool.description ?? '', parameters: toInputSchema(tool.inputSchema) },
    async (args, context) => {
      let result: unknown;
      try {
        result = await ownSignal(context.signal, (signal) =>
          client.callTool({ name: tool.name, arguments: args }, undefined, {
            signal,
            timeout: CALL_TIMEOUT_MS,
            resetTimeoutOnProgress: true,
          }),
        );
      } catch (error) {
        throw failure(error);
      }
      return mcpResultToOutput(result);
    },
  );
  return { ...defined, readOnly: tool.annotations?.readOnlyHint === true };
}

/** The SDK's error for a request pending when the connection closed (a server may use -32000 too). */
const CONNECTION_CLOSED = { code: -32000, message: 'MCP error -32000: Connection closed' };

/**
 * A failed call as the model reads it, naming the server. The SDK's bare `Connection closed` (the
 * call was pending) and `Not connected` (a later call) say how a stdio server ended when it exited
 * on its own; an answer over the size limit says so, without the SDK's `MCP error -32603:`.
 */
function callFailure(server: string, transport: Transport, error: unknown): Error {
  const prefix = `mcp server "${server}"`;
  if (!(error instanceof Error)) return new Error(`${prefix}: ${String(error)}`, { cause: error });
  const { code, data } = error as { code?: unknown; data?: unknown };
  const exit = transport instanceof ProcessGroupStdioTransport ? transport.exitStatus() : undefined;
  const ended = exit ? `: the server ${exit}` : '';
  let message = error.message;
  if (code === CONNECTION_CLOSED.code && message === CONNECTION_CLOSED.message)
    message = `connection closed during the call${ended}`;
  else if (error.message === 'Not connected') message = `not connected${ended}`;
  else if (asRecord(data).reason === ANSWER_TOO_LARGE) message = message.replace(/^MCP error -?\d+: /, '');
  return new Error(`${prefix}: ${message}`, { cause: error });
}

/**
 * One SDK request under a signal of its own that follows `runSignal`. The SDK listens for abort on
 * a request's signal and never stops: given the run's signal, every request (each tool call, each
 * page of tools) would leave a listener and its closure on it for the rest of the run.
 */
async function ownSignal<T>(
  runSignal: AbortSignal,
  request: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const { controller, dispose } = followParent(runSignal);
  try {
    return await request(controller.signal);
  } finally {
    dispose();
  }
}
