/** A response body as undici gives it: chunks of bytes, and a way to stop reading. */
export interface ByteStream extends AsyncIterable<Buffer> {
  destroy(): void;
}

/**
 * Reads a body up to `max` bytes. Past that, reading stops (the connection is dropped) and
 * `overflow` is set; `data` then holds the first `max` bytes. When `signal` fires, the body is
 * dropped and its reason thrown, however slowly the bytes are still arriving.
 */
export async function readBodyCapped(
  body: ByteStream,
  max: number,
  signal?: AbortSignal,
): Promise<{ data: Buffer; overflow: boolean }> {
  signal?.throwIfAborted();
  const stop = (): void => body.destroy();
  signal?.addEventListener('abort', stop, { once: true });
  try {
    return await readAll(body, max);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw error;
  } finally {
    signal?.removeEventListener('abort', stop);
  }
}

async function readAll(body: ByteStream, max: number): Promise<{ data: Buffer; overflow: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size > max) {
      body.destroy();
      return { data: Buffer.concat(chunks).subarray(0, max), overflow: true };
    }
  }
  return { data: Buffer.concat(chunks), overflow: false };
}
