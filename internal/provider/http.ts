import { cutShort, type HttpResponse } from '../http/connection.js';
import type { HttpPool } from '../http/pool.js';

/** Largest response body accepted (a reply of this size is a misbehaving server, not a model). */
export const MAX_BODY_BYTES = 32 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  constructor(limit: number) {
    super(`response body larger than ${limit / (1024 * 1024)} MiB (axe's limit for one response)`);
    this.name = 'BodyTooLargeError';
  }
}

/**
 * POSTs `body` (JSON: `headers` say so) and resolves with the response's head. An abort of
 * `signal` closes the connection, whether the answer has begun or not. Once the request is out,
 * `warm` connections to the same server are opened (`HttpPool.warm`). Frozen `headers` (a
 * provider's, the same for every call) keep their head from one call to the next.
 */
export function postJson(
  pool: HttpPool,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  signal: AbortSignal,
  warm?: number,
): Promise<HttpResponse> {
  const payload = Buffer.from(body, 'utf8');
  return pool.post(url, headers, payload, signal, warm ? () => pool.warm(url, warm) : undefined);
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
    // Closed without its end: failed, maybe before this reader came (then with no 'error' to see).
    const closedEarly = (): void => {
      if (!body.readableEnded) reject(body.errored ?? cutShort());
    };
    body.once('close', closedEarly);
    if (body.destroyed) closedEarly();
  });
}

/** One decoder for every whole body: making one costs ~20 µs (a 512-way fan-out reads 512 bodies). */
const utf8 = new TextDecoder('utf-8');
