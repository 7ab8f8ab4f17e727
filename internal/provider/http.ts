import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';

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
  /**
   * Ends every connection now. Called when the run is over, so a request still in flight is one
   * nobody will read: it fails instead of keeping the process alive.
   */
  close(): Promise<void>;
}

// Idle connections stay open this long for the next turn; a run's turns come well within it.
const KEEP_ALIVE_MS = 30_000;

/**
 * `node:http` when a model is first called: a dry run, `agents list` or a replay never load it
 * (~4 ms); `node:https` (TLS, crypto) only for an https:// base URL.
 */
function http(): typeof import('node:http') {
  return process.getBuiltinModule('node:http');
}

/** A run's pool: one keep-alive agent per protocol. No socket timeouts: the run's deadline bounds every call. */
export function createHttpPool(): HttpPool {
  const agents = new Map<string, Agent>();
  let closed = false;
  return {
    agent(protocol) {
      if (closed) throw new Error('the HTTP pool is closed: the run is over');
      let agent = agents.get(protocol);
      if (!agent) {
        const options = {
          keepAlive: true,
          keepAliveMsecs: KEEP_ALIVE_MS,
          scheduling: 'lifo' as const,
          // Every idle connection is kept until the run ends (Node's default keeps 256 and closes
          // the rest): a 512-way fan-out would otherwise close sockets while the parent waits.
          maxFreeSockets: Number.POSITIVE_INFINITY,
        };
        agent =
          protocol === 'https:'
            ? new (process.getBuiltinModule('node:https').Agent)(options)
            : new (http().Agent)(options);
        agents.set(protocol, agent);
      }
      return agent;
    },
    async close() {
      closed = true;
      for (const agent of agents.values()) agent.destroy();
    },
  };
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

export async function postJson(
  pool: HttpPool,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
): Promise<HttpResponse> {
  const target = new URL(url);
  const agent = pool.agent(target.protocol);
  signal.throwIfAborted();
  const payload = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    // `http.request` takes https:// too when given an https.Agent: the agent sets the protocol.
    const request = http().request(target, {
      method: 'POST',
      agent,
      signal,
      headers: { 'content-type': 'application/json', 'content-length': payload.byteLength, ...headers },
    });
    request.on('error', reject);
    request.once('response', (response) => {
      resolve({
        status: response.statusCode ?? 0,
        headers: flattenHeaders(response.headers),
        body: response,
      });
    });
    request.end(payload);
  });
}

function flattenHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
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

export async function readText(body: HttpResponse['body'], limit = MAX_BODY_BYTES): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of boundedChunks(body, limit)) chunks.push(chunk);
  return utf8.decode(Buffer.concat(chunks));
}

/** One decoder for every whole body: making one costs ~20 µs (a 512-way fan-out reads 512 bodies). */
const utf8 = new TextDecoder('utf-8');
