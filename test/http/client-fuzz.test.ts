import { getEventListeners, setMaxListeners } from 'node:events';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHttpPool } from '../../internal/http/pool.js';
import { readText } from '../../internal/provider/http.js';
import { NO_ANSWER, type RawServer, startRawServer, within } from './raw-server.js';

/**
 * Whatever a server sends, in whatever pieces, before it closes the connection or resets it: the
 * client's post and the body's reader always settle (no hang, no uncaught error, no abort
 * listener left behind), and a response sent whole is read whole. Each exchange has a pool of
 * its own: a server that closes a kept connection just as the next request goes out on it fails
 * that request (ECONNRESET, retried by the provider layer), for node:http as for this client.
 */

interface Script {
  bytes: Buffer;
  /** Where the bytes are cut: each piece is written on its own turn of the server's loop. */
  cuts: number[];
  /** How the server leaves the connection once everything is written. */
  ending: 'end' | 'reset';
}

let script: Script | undefined;
let server: RawServer;

beforeAll(async () => {
  server = await startRawServer((request) => {
    const { bytes, cuts, ending } = script as Script;
    void (async () => {
      let from = 0;
      for (const cut of [...cuts, bytes.length]) {
        if (cut > from) request.socket.write(bytes.subarray(from, cut));
        from = Math.max(from, cut);
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (ending === 'end') request.socket.end();
      else request.socket.resetAndDestroy();
    })();
  });
});

afterAll(async () => {
  await server.close();
});

const body = (text: string) => Buffer.from(text, 'latin1');
const TEMPLATES: [bytes: Buffer, text: string][] = [
  [
    body('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{"ok":true}'),
    '{"ok":true}',
  ],
  [
    body(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n6\r\n world\r\n0\r\nT: 1\r\n\r\n',
    ),
    'hello world',
  ],
  [body('HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nserver error'), 'server error'],
  [body('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n'), ''],
  [body('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok'), 'ok'],
];

const scriptArb = fc
  .record({
    template: fc.nat({ max: TEMPLATES.length - 1 }),
    // Byte edits: each replaces, inserts or deletes one byte somewhere.
    edits: fc.array(
      fc.record({
        at: fc.nat(),
        kind: fc.constantFrom('set', 'insert', 'delete'),
        byte: fc.nat({ max: 255 }),
      }),
      { maxLength: 3 },
    ),
    truncateAt: fc.option(fc.nat(), { nil: undefined }),
    // Often none: a head and a bad body in one read is the case readers must not miss.
    cuts: fc.oneof(fc.constant<number[]>([]), fc.array(fc.nat(), { minLength: 1, maxLength: 6 })),
    ending: fc.constantFrom('end' as const, 'reset' as const),
  })
  .map(({ template, edits, truncateAt, cuts, ending }) => {
    const [original, text] = TEMPLATES[template] as [Buffer, string];
    let bytes = Buffer.from(original);
    for (const { at, kind, byte } of edits) {
      const where = at % (bytes.length + 1);
      const before = bytes.subarray(0, where);
      const after = bytes.subarray(kind === 'insert' ? where : where + 1);
      bytes = Buffer.concat(kind === 'delete' ? [before, after] : [before, Buffer.from([byte]), after]);
    }
    if (truncateAt !== undefined) bytes = bytes.subarray(0, truncateAt % (bytes.length + 1));
    const intact = edits.length === 0 && truncateAt === undefined && ending === 'end';
    return {
      script: { bytes, cuts: cuts.map((cut) => cut % (bytes.length + 1)).sort((a, b) => a - b), ending },
      expected: intact ? text : undefined,
    };
  });

it('every exchange settles, whatever the server sends and however it ends', async () => {
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  try {
    await fc.assert(
      fc.asyncProperty(scriptArb, async ({ script: next, expected }) => {
        script = next;
        const pool = createHttpPool();
        const outcome = await within(
          (async () => {
            const response = await pool.post(
              server.url(),
              { 'content-length': 2 },
              Buffer.from('{}'),
              signal,
            );
            return `${response.status} ${await readText(response.body)}`;
          })().catch((error: NodeJS.ErrnoException) => `failed ${error.code ?? error.message}`),
          2000,
        );
        await pool.close();
        expect(outcome).not.toBe(NO_ANSWER);
        if (expected !== undefined) expect(outcome).toMatch(new RegExp(`^\\d{3} ${expected}$`));
        expect(getEventListeners(signal, 'abort')).toHaveLength(0);
      }),
      { seed: 4242, numRuns: 300 },
    );
    await new Promise((resolve) => setImmediate(resolve));
    expect(uncaught).toEqual([]);
  } finally {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  }
}, 60_000);
