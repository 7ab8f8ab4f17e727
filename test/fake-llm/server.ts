import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import {
  breakpointCount,
  type CacheOptions,
  MAX_CACHE_BREAKPOINTS,
  PromptCache,
  withCacheUsage,
} from './cache.js';
import { Exchange } from './exchange.js';
import { parseJson } from './json.js';
import { RateLimiter, type RateLimitOptions } from './rate-limit.js';
import { sendFault, sendJson, sendRefusal, sendStream } from './respond.js';
import { routeOf } from './routes.js';
import type { FakeLlm, RecordedRequest, Responder, ScriptedReply } from './types.js';
import type { IncomingRequest } from './wire.js';

/**
 * The fake LLM server: a real HTTP server on 127.0.0.1 speaking the Anthropic, OpenAI, Ollama and
 * Gemini wires (see types.ts for routing and the scripting contract).
 */
interface State {
  /** Every accepted connection, numbered in accept order. */
  connections: WeakMap<Socket, RecordedRequest['connection']>;
  connectionCount: number;
  requests: RecordedRequest[];
  queue: ScriptedReply[];
  responder: Responder | undefined;
  cache: PromptCache | undefined;
  rateLimit: RateLimiter | undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client left before sending the whole body'));
    });
  });
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

async function nextReply(state: State, request: RecordedRequest): Promise<ScriptedReply | undefined> {
  if (state.responder) return state.responder(request);
  return state.queue.shift();
}

async function handle(state: State, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedAt = Date.now();
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const method = req.method ?? 'GET';
  const route = routeOf(method, url.pathname);
  const text = await readBody(req);
  const incoming: IncomingRequest = {
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers: headersOf(req),
    body: text === '' ? undefined : parseJson(text),
    text,
    rawPath: (req.url ?? '/').split('?')[0] ?? '/',
    ...(route.pathModel === undefined ? {} : { pathModel: route.pathModel }),
  };
  const record: RecordedRequest = {
    index: state.requests.length,
    wire: route.format.wire,
    method,
    path: incoming.path,
    query: incoming.query,
    headers: incoming.headers,
    body: incoming.body,
    text,
    ...route.format.summarize(incoming),
    receivedAt,
    aborted: false,
    connection: state.connections.get(req.socket) ?? { id: -1, openedAt: receivedAt },
  };
  state.requests.push(record);
  const exchange = new Exchange(req, res, record);
  const format = route.format;
  const limited = route.found ? state.rateLimit?.take(receivedAt) : undefined;
  if (limited && !limited.allowed) {
    record.throttled = true;
    sendRefusal(
      exchange,
      format,
      { status: 429, message: 'Rate limit reached for requests' },
      limited.headers,
    );
    return;
  }
  const refusal = route.found
    ? (format.validate(incoming) ?? breakpointRefusal(record))
    : { status: 404, message: `Invalid URL (${method} ${incoming.path})` };
  if (refusal) {
    record.rejection = refusal.message;
    sendRefusal(exchange, format, refusal);
    return;
  }
  const lookup = state.cache?.lookup(record.wire, record.model, record.body);
  if (lookup) record.cache = lookup.usage;
  const scripted = await nextReply(state, record);
  const reply = scripted && lookup ? withCacheUsage(scripted, record.wire, lookup.usage) : scripted;
  if (!reply) {
    sendRefusal(exchange, format, {
      status: 500,
      message: `fake-llm: no reply scripted for request #${record.index}`,
    });
    return;
  }
  exchange.replyHeaders = { ...limited?.headers, ...reply.headers };
  await exchange.wait(reply.delayMs);
  if (exchange.closed) return;
  // The response starts: what this request wrote to the cache can be read by the next ones.
  if (lookup && !reply.fault) state.cache?.commit(lookup);
  if (reply.fault) await sendFault(exchange, format, reply, reply.fault);
  else if (record.stream) await sendStream(exchange, format, reply);
  else sendJson(exchange, format, reply);
}

/** Anthropic and Bedrock refuse a request with more than four cache breakpoints. */
function breakpointRefusal(record: RecordedRequest): { status: number; message: string } | undefined {
  const count = breakpointCount(record.wire, record.body);
  if (count <= MAX_CACHE_BREAKPOINTS) return undefined;
  const message =
    record.wire === 'anthropic'
      ? `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${count}.`
      : `The number of cache points exceeds the maximum of ${MAX_CACHE_BREAKPOINTS}. Found ${count}.`;
  return { status: 400, message };
}

export interface FakeLlmOptions {
  respond?: Responder;
  /**
   * Model the providers' prompt caches (cache.ts): replies that script no input or cache counts
   * get the ones the cache computes, and every request records them in `cache`.
   */
  cache?: boolean | CacheOptions;
  /** A rate limit in front of every route (rate-limit.ts): 429 with `retry-after` beyond it. */
  rateLimit?: RateLimitOptions;
}

export async function startFakeLlm(options: FakeLlmOptions = {}): Promise<FakeLlm> {
  const state: State = {
    connections: new WeakMap(),
    connectionCount: 0,
    requests: [],
    queue: [],
    responder: options.respond,
    cache:
      options.cache === undefined || options.cache === false
        ? undefined
        : new PromptCache(options.cache === true ? {} : options.cache),
    rateLimit: options.rateLimit ? new RateLimiter(options.rateLimit) : undefined,
  };
  const server = createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      // A responder that throws is a bug in the test: answer 500 so the client fails visibly.
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`fake-llm: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  server.on('connection', (socket: Socket) => {
    state.connections.set(socket, { id: state.connectionCount++, openedAt: Date.now() });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: state.requests,
    get connections() {
      return state.connectionCount;
    },
    get rejections() {
      return state.requests.filter((r) => r.rejection !== undefined);
    },
    enqueue(...replies) {
      state.queue.push(...replies);
    },
    respond(responder) {
      state.responder = responder;
    },
    reset() {
      state.requests.length = 0;
      state.queue.length = 0;
      state.responder = undefined;
      state.cache?.clear();
    },
    clearCache() {
      state.cache?.clear();
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
