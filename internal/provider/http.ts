import type { Agent, IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';

/**
 * The one HTTP sender every provider uses: `node:http` (its parser is native: no WebAssembly to
 * compile at start-up, nothing to wait for at exit), a keep-alive pool per run, every request tied
 * to an AbortSignal (an abort destroys its socket), redirects never followed (`node:http` has no
 * redirect handling), and bodies read with a size bound. `node:https` is loaded only for an
 * https:// base URL.
 */
export interface HttpPool {
  /** The keep-alive agent for `protocol` (`http:` / `https:`), made on first use. */
  agent(protocol: string): Agent;
  /** Where a request to `url` goes, parsed once per run. */
  target(url: string): RequestTarget;
  /**
   * Opens connections to `url`'s server until `count` stand idle (kept, or opening), for requests
   * about to come: a fan-out's children find them ready. Only a server this pool has already
   * connected to (its connection settings are those of that first connection); never more than
   * `count` idle whatever the number of callers.
   */
  warm(url: string, count: number): void;
  /**
   * Opens a connection to `url`'s server, as a request with `headers` would, when the pool has none
   * yet: an agent about to call its model gets DNS, TCP and TLS done while it reads its files and
   * starts its MCP servers. Its first request then goes out at once. Not when `headers` set Host,
   * after which Node names the TLS server.
   */
  preconnect(url: string, headers: Record<string, string>): void;
  /**
   * Ends every connection now. Called when the run is over, so a request still in flight is one
   * nobody will read: it fails instead of keeping the process alive.
   */
  close(): Promise<void>;
}

/** A request's destination as `http.request` takes it. */
export interface RequestTarget {
  protocol: string;
  hostname: string;
  port: number;
  path: string;
  /** `hostname:port`: the server whose connections `warm` opens. */
  server: string;
}

// Idle connections stay open this long for the next turn; a run's turns come well within it.
const KEEP_ALIVE_MS = 30_000;

/** The options of the run's agents, and so of every connection they open. */
const AGENT_OPTIONS = {
  keepAlive: true,
  keepAliveMsecs: KEEP_ALIVE_MS,
  scheduling: 'lifo' as const,
  // Every idle connection is kept until the run ends (Node's default keeps 256 and closes the
  // rest): a 512-way fan-out would otherwise close sockets while the parent waits.
  maxFreeSockets: Number.POSITIVE_INFINITY,
};

/**
 * `node:http` when a model is first called: a dry run, `agents list` or a replay never load it
 * (~4 ms); `node:https` (TLS, crypto) only for an https:// base URL.
 */
function http(): typeof import('node:http') {
  return process.getBuiltinModule('node:http');
}

type ConnectionOptions = { host?: string; port?: number; _agentKey?: string; [option: string]: unknown };
type CreateConnection = (options: ConnectionOptions, callback?: unknown) => Socket;

/** A run's pool: one keep-alive agent per protocol. No socket timeouts: the run's deadline bounds every call. */
export function createHttpPool(): HttpPool {
  const agents = new Map<string, { agent: Agent; spares: Spares }>();
  const targets = new Map<string, RequestTarget>();
  let closed = false;
  const entry = (protocol: string) => {
    if (closed) throw new Error('the HTTP pool is closed: the run is over');
    let made = agents.get(protocol);
    if (!made) {
      const agent =
        protocol === 'https:'
          ? new (process.getBuiltinModule('node:https').Agent)(AGENT_OPTIONS)
          : new (http().Agent)(AGENT_OPTIONS);
      made = { agent, spares: new Spares(agent) };
      agents.set(protocol, made);
    }
    return made;
  };
  return {
    agent: (protocol) => entry(protocol).agent,
    target(url) {
      let target = targets.get(url);
      if (!target) {
        target = parseTarget(url);
        targets.set(url, target);
      }
      return target;
    },
    warm(url, count) {
      if (closed) return;
      const target = this.target(url);
      try {
        entry(target.protocol).spares.fill(target.server, count);
      } catch {
        // Only a head start: a connection that cannot be opened now is opened, or fails, on use.
      }
    },
    preconnect(url, headers) {
      if (closed || Object.keys(headers).some((name) => name.toLowerCase() === 'host')) return;
      try {
        const target = this.target(url);
        if (target.protocol !== 'http:' && target.protocol !== 'https:') return;
        entry(target.protocol).spares.preconnect(target);
      } catch {
        // An invalid URL, a connection that cannot be opened: the request says so itself.
      }
    },
    async close() {
      closed = true;
      for (const { agent, spares } of agents.values()) {
        spares.destroy();
        agent.destroy();
      }
    },
  };
}

function parseTarget(url: string): RequestTarget {
  const parsed = new URL(url);
  // `[::1]` is a host in a URL, `::1` one to connect to.
  const hostname = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const port = parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  return {
    protocol: parsed.protocol,
    hostname,
    port,
    path: `${parsed.pathname}${parsed.search}`,
    server: `${hostname}:${port}`,
  };
}

/**
 * Connections opened ahead of the requests that will use them. The agent asks for a new
 * connection through `createConnection`; a spare one to that server is handed over instead. A
 * spare is opened with the settings the agent gave its last connection to that server (TLS name,
 * session, keep-alive), so it is one the agent would have made itself; until handed over it does
 * not keep the process alive, and one the server closes is dropped.
 */
class Spares {
  readonly #byServer = new Map<string, { socket: Socket; drop: () => void }[]>();
  /** The agent's settings for each server it has connected to (or is about to). */
  readonly #settings = new Map<string, ConnectionOptions>();
  readonly #open: CreateConnection;

  constructor(private readonly agent: Agent) {
    const target = agent as unknown as { createConnection: CreateConnection };
    this.#open = target.createConnection.bind(agent);
    target.createConnection = (options, callback) => {
      const server = `${options.host}:${options.port}`;
      this.#settings.set(server, { ...options });
      return this.#take(server) ?? this.#open(options, callback);
    };
  }

  /**
   * One connection to `target`'s server before the agent has made any: with the settings the
   * agent gives a request's connection (Agent#createSocket: its options, the TLS name, its key
   * for TLS sessions, keep-alive), until a request replaces them with its own.
   */
  preconnect({ hostname, port, server }: RequestTarget): void {
    if (this.#settings.has(server)) return;
    const settings: ConnectionOptions = {
      ...AGENT_OPTIONS,
      noDelay: true,
      host: hostname,
      port,
      // No SNI for an IP address, as Node leaves it out.
      servername: process.getBuiltinModule('node:net').isIP(hostname) === 0 ? hostname : '',
      encoding: null,
      keepAliveInitialDelay: KEEP_ALIVE_MS,
    };
    settings._agentKey = this.agent.getName(settings);
    this.#settings.set(server, settings);
    this.fill(server, 1);
  }

  /** Opens connections to `server` until `count` are idle (the agent's free ones included). */
  fill(server: string, count: number): void {
    const settings = this.#settings.get(server);
    if (!settings) return;
    const spares = this.#byServer.get(server) ?? [];
    this.#byServer.set(server, spares);
    const free = this.agent.freeSockets[settings._agentKey ?? '']?.length ?? 0;
    for (let idle = spares.length + free; idle < count; idle++) {
      const socket = this.#open({ ...settings });
      socket.unref();
      const drop = () => {
        const at = spares.findIndex((spare) => spare.socket === socket);
        if (at >= 0) spares.splice(at, 1);
        socket.destroy();
      };
      for (const event of ['error', 'end', 'close']) socket.on(event, drop);
      spares.push({ socket, drop });
    }
  }

  #take(server: string): Socket | undefined {
    const spares = this.#byServer.get(server);
    for (let spare = spares?.pop(); spare; spare = spares?.pop()) {
      const { socket, drop } = spare;
      for (const event of ['error', 'end', 'close']) socket.off(event, drop);
      if (socket.destroyed || !socket.writable) {
        socket.destroy();
        continue;
      }
      socket.ref();
      return socket;
    }
    return undefined;
  }

  destroy(): void {
    for (const spares of this.#byServer.values()) for (const { socket } of spares.splice(0)) socket.destroy();
  }
}

/** Largest response body accepted (a reply of this size is a misbehaving server, not a model). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface HttpResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: IncomingMessage;
}

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`response body larger than ${limit / (1024 * 1024)} MiB (axe's limit for one response)`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * Sends `body` and resolves with the response's head. An abort of `signal` destroys the request
 * and its socket, whether the answer has begun or not; the listener goes when the request closes.
 * Once the request is out, `warm` connections to the same server are opened (`HttpPool.warm`).
 */
export async function postJson(
  pool: HttpPool,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
  warm?: number,
): Promise<HttpResponse> {
  const { protocol, hostname, port, path } = pool.target(url);
  const agent = pool.agent(protocol);
  signal.throwIfAborted();
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    // `http.request` takes https:// too when given an https.Agent: the agent sets the protocol.
    const request = http().request({
      protocol,
      hostname,
      port,
      path,
      method: 'POST',
      agent,
      headers: { 'content-type': 'application/json', 'content-length': payload.byteLength, ...headers },
    });
    const onAbort = () => request.destroy(new Error('request aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    request.once('close', () => signal.removeEventListener('abort', onAbort));
    if (warm) request.once('finish', () => pool.warm(url, warm));
    request.on('error', reject);
    request.once('response', (response) => {
      resolve({
        status: response.statusCode ?? 0,
        headers: headersOf(response.rawHeaders),
        body: response,
      });
    });
    request.end(payload);
  });
}

/** Headers Node keeps the first of when a response repeats them (as `IncomingMessage.headers` does). */
const FIRST_WINS = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/**
 * The response's headers, names lowercased, as `IncomingMessage.headers` reads them (a repeated
 * header joined with `, `, `cookie` with `; `, the first kept of FIRST_WINS), built from
 * `rawHeaders` in one pass: Node's own getter, then a copy, took ~40 µs an answer (20 ms of a
 * 512-way fan-out's last answers).
 */
function headersOf(raw: readonly string[]): Record<string, string> {
  // No prototype: a header named `__proto__` is a header like any other.
  const out: Record<string, string> = Object.create(null);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const value = raw[i + 1] as string;
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (!FIRST_WINS.has(name)) out[name] = `${seen}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return out;
}

/** Yields the body's chunks, failing (and closing the connection) once `limit` bytes are passed. */
export async function* boundedChunks(
  body: HttpResponse['body'],
  limit = MAX_BODY_BYTES,
): AsyncGenerator<Uint8Array> {
  let total = 0;
  let complete = false;
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      total += chunk.byteLength;
      if (total > limit) throw new BodyTooLargeError(limit);
      yield chunk;
    }
    complete = true;
  } finally {
    // A body left unread (error, break) must not keep its connection busy: destroying it closes it.
    if (!complete) body.destroy();
  }
}

/**
 * The whole body as text, failing (and closing the connection) once `limit` bytes are passed or
 * when the connection ends before the body does. Read through events: an async iterator per
 * body costs a fan-out's every child ~0.1 ms.
 */
export function readText(body: HttpResponse['body'], limit = MAX_BODY_BYTES): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const fail = (error: Error): void => {
      reject(error);
      body.destroy();
    };
    body.on('data', (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) fail(new BodyTooLargeError(limit));
      else chunks.push(chunk);
    });
    body.once('end', () => resolve(utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks))));
    body.once('error', fail);
  });
}

/** One decoder for every whole body: making one costs ~20 µs (a 512-way fan-out reads 512 bodies). */
const utf8 = new TextDecoder('utf-8');
