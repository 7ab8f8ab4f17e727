import type { IncomingHttpHeaders } from 'node:http';
import { createRequire } from 'node:module';
import type { Agent, Dispatcher } from 'undici';

/**
 * The one HTTP sender every provider uses: a keep-alive pool per run, every request tied to an
 * AbortSignal (undici destroys the socket of an aborted in-flight request), redirects never
 * followed (undici 7's `request` has no redirect handling unless an interceptor is added), and
 * bodies read with a size bound.
 */
export interface HttpPool {
  readonly dispatcher: Dispatcher;
  /**
   * Ends every connection now. Called when the run is over, so a request still in flight is one
   * nobody will read: it fails instead of keeping the process alive.
   */
  close(): Promise<void>;
}

type RequestFunction = (
  this: Dispatcher,
  options: Dispatcher.RequestOptions,
) => Promise<Dispatcher.ResponseData>;

interface UndiciParts {
  Agent: typeof Agent;
  request: RequestFunction;
}

let undiciParts: UndiciParts | undefined;

/**
 * The two undici modules we use, loaded when a live run makes its pool. `import 'undici'` would load the
 * whole package (fetch, WebSocket, caches, mocks: ~100 ms of CPU) at the start of every run.
 * Deep paths work because undici has no `exports` map; test/provider/undici-loading.test.ts
 * fails if a version bump moves them.
 */
function undici(): UndiciParts {
  if (undiciParts === undefined) {
    const require = createRequire(import.meta.url);
    undiciParts = {
      Agent: require('undici/lib/dispatcher/agent.js') as typeof Agent,
      request: require('undici/lib/api/api-request.js') as RequestFunction,
    };
  }
  return undiciParts;
}

/**
 * A live run's pool, made when the run is set up — so the HTTP client is loaded then, not inside
 * the first model turn. A replayed run makes none and never loads undici.
 */
export function createHttpPool(): HttpPool {
  // No undici timeouts: a long generation is legitimate; the run's deadline (the signal) bounds it.
  const agent = new (undici().Agent)({ keepAliveTimeout: 30_000, headersTimeout: 0, bodyTimeout: 0 });
  let closed = false;
  return {
    get dispatcher() {
      if (closed) throw new Error('the HTTP pool is closed: the run is over');
      return agent;
    },
    async close() {
      closed = true;
      // `destroy`, not `close`: undici's close waits for in-flight requests without limit.
      await agent.destroy();
    },
  };
}

/** Largest response body accepted (a reply of this size is a misbehaving server, not a model). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export interface HttpResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Dispatcher.ResponseData['body'];
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
  const response = await undici().request.call(pool.dispatcher, {
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    signal,
  });
  return { status: response.statusCode, headers: flattenHeaders(response.headers), body: response.body };
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
  const decoder = new TextDecoder('utf-8');
  let text = '';
  for await (const chunk of boundedChunks(body, limit)) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
