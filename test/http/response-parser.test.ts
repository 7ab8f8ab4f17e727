import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  HttpParseError,
  MAX_HEAD_BYTES,
  type ResponseHead,
  ResponseParser,
  type ResponseSink,
} from '../../internal/http/response-parser.js';

/** Everything the parser reported, in order, with the body's pieces copied as they came. */
class Recorder implements ResponseSink {
  readonly heads: ResponseHead[] = [];
  readonly pieces: Buffer[] = [];
  ends = 0;
  /** A report out of order: body before head or after end, an empty piece, a second head or end. */
  readonly faults: string[] = [];

  onHead(head: ResponseHead): void {
    if (this.heads.length > 0 || this.ends > 0) this.faults.push('head again');
    this.heads.push({ ...head, rawHeaders: [...head.rawHeaders] });
  }

  onBody(chunk: Buffer): void {
    if (this.heads.length !== 1 || this.ends > 0) this.faults.push('body outside the response');
    if (chunk.length === 0) this.faults.push('empty body piece');
    // Copied: the parser may hand over a view of the buffer it was pushed.
    this.pieces.push(Buffer.from(chunk));
  }

  onEnd(): void {
    if (this.heads.length !== 1 || this.ends > 0) this.faults.push('end again or before head');
    this.ends++;
  }

  get body(): Buffer {
    return Buffer.concat(this.pieces);
  }
}

interface Outcome {
  heads: ResponseHead[];
  body: Buffer;
  endsBeforeFinish: number;
  ends: number;
  reusable: boolean;
  finished: boolean | undefined;
  error: string | undefined;
  faults: string[];
}

/**
 * Pushes `bytes` cut at `cuts` (each push a fresh copy, overwritten with 0xAA right after, as a
 * socket's buffer may be), then ends the connection. A parse error stops it there.
 */
function feed(bytes: Buffer, cuts: readonly number[] = []): Outcome {
  const parser = new ResponseParser();
  const sink = new Recorder();
  parser.expect(sink);
  const edges = [...new Set(cuts.filter((cut) => cut > 0 && cut < bytes.length))].sort((a, b) => a - b);
  let error: string | undefined;
  let endsBeforeFinish = 0;
  let reusable = false;
  let finished: boolean | undefined;
  try {
    let from = 0;
    for (const to of [...edges, bytes.length]) {
      const piece = Buffer.from(bytes.subarray(from, to));
      parser.push(piece);
      piece.fill(0xaa);
      from = to;
    }
    endsBeforeFinish = sink.ends;
    reusable = parser.reusable;
    finished = parser.finish();
  } catch (thrown) {
    if (!(thrown instanceof HttpParseError)) throw thrown;
    error = thrown.code;
  }
  return {
    heads: sink.heads,
    body: sink.body,
    endsBeforeFinish,
    ends: sink.ends,
    reusable,
    finished,
    error,
    faults: sink.faults,
  };
}

const everyByte = (bytes: Buffer): number[] => Array.from({ length: bytes.length }, (_, i) => i);
const latin1 = (text: string): Buffer => Buffer.from(text, 'latin1');

/** The error code parsing `text` ends with, the same whether it comes whole, byte by byte or in thirds. */
function errorOf(text: string): string | undefined {
  const bytes = latin1(text);
  const whole = feed(bytes).error;
  expect(feed(bytes, everyByte(bytes)).error).toBe(whole);
  const third = Math.floor(bytes.length / 3);
  expect(feed(bytes, [third, 2 * third]).error).toBe(whole);
  return whole;
}

/** Parses a complete response whole and byte by byte; both must agree. */
function parse(text: string): Outcome {
  const bytes = latin1(text);
  const whole = feed(bytes);
  expect(whole.error).toBeUndefined();
  expect(whole.faults).toEqual([]);
  expect(feed(bytes, everyByte(bytes))).toEqual(whole);
  return whole;
}

// ---------------------------------------------------------------------------------------------
// Generated responses

const TOKEN_CHARS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split('');
// Field-value octets: HTAB, SP, VCHAR and obs-text; read back as latin1.
const VALUE_CHARS = [
  '\t',
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  ...Array.from({ length: 0x80 }, (_, i) => String.fromCharCode(0x80 + i)),
];
const FRAMING_NAMES = new Set(['content-length', 'transfer-encoding', 'connection']);

const nameArb = fc
  .string({ unit: fc.constantFrom(...TOKEN_CHARS), minLength: 1, maxLength: 12 })
  .filter((name) => !FRAMING_NAMES.has(name.toLowerCase()));
const valueArb = fc.string({ unit: fc.constantFrom(...VALUE_CHARS), maxLength: 24 });
const fieldArb = fc.tuple(nameArb, valueArb);
const owsArb = fc.constantFrom('', '', ' ', '\t', ' \t ');
const eolArb = fc.oneof(
  { arbitrary: fc.constant('\r\n'), weight: 5 },
  { arbitrary: fc.constant('\n'), weight: 1 },
);

const framingArb = fc.oneof(
  fc.record({
    kind: fc.constant('length' as const),
    name: fc.constantFrom('Content-Length', 'content-length', 'CONTENT-LENGTH'),
    before: owsArb,
    after: owsArb,
  }),
  fc.record({
    kind: fc.constant('chunked' as const),
    name: fc.constantFrom('Transfer-Encoding', 'transfer-encoding'),
    codings: fc.constantFrom('chunked', 'Chunked', 'gzip, chunked', 'gzip,chunked '),
    sizes: fc.array(fc.integer({ min: 1, max: 48 }), { maxLength: 6 }),
    extensions: fc.array(fc.constantFrom('', '', ';a=b', ' ;a=b', ';a=b;c', ';x="y z"', '\t;n'), {
      minLength: 1,
      maxLength: 4,
    }),
    upper: fc.boolean(),
    zeros: fc.nat({ max: 3 }),
    trailers: fc.array(fieldArb, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('close' as const) }),
);

const responseArb = fc.record({
  interim: fc.array(
    fc.record({ status: fc.constantFrom(100, 103), fields: fc.array(fieldArb, { maxLength: 2 }) }),
    {
      maxLength: 2,
    },
  ),
  minor: fc.oneof({ arbitrary: fc.constant(1), weight: 4 }, { arbitrary: fc.constant(0), weight: 1 }),
  status: fc.oneof(
    { arbitrary: fc.integer({ min: 200, max: 599 }), weight: 6 },
    { arbitrary: fc.constantFrom(204, 304), weight: 1 },
  ),
  reason: fc.option(fc.string({ unit: fc.constantFrom(...VALUE_CHARS), maxLength: 12 })),
  fields: fc.array(fieldArb, { maxLength: 6 }),
  connection: fc.constantFrom(undefined, 'close', 'keep-alive', 'Keep-Alive', 'TE, close', 'foo'),
  framing: framingArb,
  /** Where the framing and Connection headers go among the others. */
  at: fc.tuple(fc.nat(), fc.nat()),
  payload: fc.uint8Array({ maxLength: 160 }),
  eols: fc.array(eolArb, { minLength: 1, maxLength: 7 }),
});

type ResponseSpec = typeof responseArb extends fc.Arbitrary<infer T> ? T : never;

interface Built {
  bytes: Buffer;
  head: ResponseHead;
  body: Buffer;
  /** The body runs to the connection's end: onEnd comes from finish(). */
  untilClose: boolean;
  /** The connection may carry the next request once this response is read. */
  keepAlive: boolean;
}

/** A field value with its surrounding whitespace dropped, as the parser must report it. */
const trimmed = (value: string): string => value.replace(/^[ \t]+|[ \t]+$/g, '');

function build(spec: ResponseSpec): Built {
  let line = 0;
  const eol = (): string => spec.eols[line++ % spec.eols.length] as string;
  let text = '';
  for (const interim of spec.interim) {
    text += `HTTP/1.1 ${interim.status} Whatever${eol()}`;
    for (const [name, value] of interim.fields) text += `${name}:${value}${eol()}`;
    text += eol();
  }
  const noBody = spec.status === 204 || spec.status === 304;
  const { framing } = spec;
  const payload = noBody ? Buffer.alloc(0) : Buffer.from(spec.payload);
  const fields: [string, string][] = [...spec.fields];
  if (framing.kind === 'length') {
    const length = `${framing.before}${spec.payload.length}${framing.after}`;
    fields.splice(spec.at[0] % (fields.length + 1), 0, [framing.name, length]);
  } else if (framing.kind === 'chunked') {
    fields.splice(spec.at[0] % (fields.length + 1), 0, [framing.name, framing.codings]);
  }
  if (spec.connection !== undefined) {
    fields.splice(spec.at[1] % (fields.length + 1), 0, ['Connection', spec.connection]);
  }
  // HTTP/1.0 with Transfer-Encoding is left out: RFC 9112 §6.1 and llhttp disagree on reuse.
  const minor = framing.kind === 'chunked' ? 1 : spec.minor;
  text += `HTTP/1.${minor} ${spec.status}${spec.reason === null ? '' : ` ${spec.reason}`}${eol()}`;
  for (const [name, value] of fields) text += `${name}:${value}${eol()}`;
  text += eol();
  let body: Buffer = Buffer.alloc(0);
  if (!noBody) {
    if (framing.kind === 'chunked') {
      let chunked = '';
      let from = 0;
      let n = 0;
      const sizeLine = (size: number): string => {
        const hex = '0'.repeat(framing.zeros) + size.toString(16);
        const extension = framing.extensions[n++ % framing.extensions.length] as string;
        return `${framing.upper ? hex.toUpperCase() : hex}${extension}${eol()}`;
      };
      while (from < payload.length) {
        const size = Math.min(
          framing.sizes[n % Math.max(1, framing.sizes.length)] ?? payload.length,
          payload.length - from,
        );
        chunked += sizeLine(size) + payload.subarray(from, from + size).toString('latin1') + eol();
        from += size;
      }
      chunked += sizeLine(0);
      for (const [name, value] of framing.trailers) chunked += `${name}:${value}${eol()}`;
      chunked += eol();
      body = latin1(chunked);
    } else {
      body = payload;
    }
  }
  const tokens = (spec.connection ?? '')
    .toLowerCase()
    .split(',')
    .map((token) => token.trim());
  const untilClose = !noBody && framing.kind === 'close';
  const keepAlive = !untilClose && (minor === 1 ? !tokens.includes('close') : tokens.includes('keep-alive'));
  const rawHeaders = fields.flatMap(([name, value]) => [name, trimmed(value)]);
  return {
    bytes: Buffer.concat([latin1(text), body]),
    head: { status: spec.status, rawHeaders },
    keepAlive,
    body: payload,
    untilClose,
  };
}

/** How to cut a response: at every byte, or at a few random places. */
const cutsArb = fc.oneof(
  { arbitrary: fc.constant('every byte' as const), weight: 1 },
  { arbitrary: fc.array(fc.nat({ max: 2000 }), { maxLength: 24 }), weight: 4 },
);

function cutsFor(bytes: Buffer, cuts: 'every byte' | number[]): number[] {
  return cuts === 'every byte' ? everyByte(bytes) : cuts.map((cut) => cut % (bytes.length + 1));
}

describe('ResponseParser: split invariance', () => {
  it('a valid response gives the same head, body and single end however its bytes are split', () => {
    fc.assert(
      fc.property(responseArb, cutsArb, (spec, cuts) => {
        const built = build(spec);
        const whole = feed(built.bytes);
        expect(whole.error).toBeUndefined();
        expect(whole.faults).toEqual([]);
        expect(whole.heads).toEqual([built.head]);
        expect(whole.body).toEqual(built.body);
        expect(whole.endsBeforeFinish).toBe(built.untilClose ? 0 : 1);
        expect(whole.ends).toBe(1);
        expect(whole.finished).toBe(true);
        expect(whole.reusable).toBe(built.keepAlive);
        expect(feed(built.bytes, cutsFor(built.bytes, cuts))).toEqual(whole);
      }),
      { seed: 9112, numRuns: 400 },
    );
  });

  it('a response cut short anywhere never ends, and finish() says so', () => {
    fc.assert(
      fc.property(responseArb, fc.nat(), cutsArb, (spec, at, cuts) => {
        const built = build(spec);
        const prefix = built.bytes.subarray(0, at % built.bytes.length);
        const outcome = feed(prefix, cutsFor(prefix, cuts));
        expect(outcome.error).toBeUndefined();
        expect(outcome.faults).toEqual([]);
        expect(outcome.reusable).toBe(false);
        if (built.untilClose && outcome.heads.length === 1) {
          // No framing but the close: whatever came is the body.
          expect(outcome.finished).toBe(true);
          expect(outcome.ends).toBe(1);
        } else {
          expect(outcome.finished).toBe(false);
          expect(outcome.ends).toBe(0);
        }
        // The body so far is a prefix of the payload.
        expect(built.body.subarray(0, outcome.body.length)).toEqual(outcome.body);
      }),
      { seed: 6003, numRuns: 300 },
    );
  });

  it('bytes after a complete response leave it complete but not reusable', () => {
    fc.assert(
      fc.property(
        responseArb.filter((spec) => !build(spec).untilClose),
        fc.uint8Array({ minLength: 1, maxLength: 20 }),
        cutsArb,
        (spec, extra, cuts) => {
          const built = build(spec);
          const bytes = Buffer.concat([built.bytes, extra]);
          const outcome = feed(bytes, cutsFor(bytes, cuts));
          expect(outcome.error).toBeUndefined();
          expect(outcome.heads).toEqual([built.head]);
          expect(outcome.body).toEqual(built.body);
          expect(outcome.ends).toBe(1);
          expect(outcome.reusable).toBe(false);
        },
      ),
      { seed: 7230, numRuns: 200 },
    );
  });
});

describe('ResponseParser: decoded content', () => {
  it('a chunked body decodes to the payload, trailers dropped, extensions ignored', () => {
    const out = parse(
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n' +
        '5;a=b\r\nhello\r\n' +
        '1 ;name="x y"\r\n,\r\n' +
        '00006\r\n world\r\n' +
        'A\r\n0123456789\r\n' +
        '0;last\r\nX-Trailer: t\r\nOther: u\r\n\r\n',
    );
    expect(out.heads[0]?.rawHeaders).toEqual(['Transfer-Encoding', 'chunked']);
    expect(out.body.toString()).toBe('hello, world0123456789');
    expect(out.endsBeforeFinish).toBe(1);
    expect(out.reusable).toBe(true);
  });

  it('a chunked body with bare LF line endings throughout', () => {
    const out = parse('HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n');
    expect(out.body.toString()).toBe('abc');
    expect(out.reusable).toBe(true);
  });

  it('a chunked body whose payload contains CRLFs and chunk-like text', () => {
    const data = '0\r\n\r\nHTTP/1.1 200 OK\r\n\r\n';
    const out = parse(
      `HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${data.length.toString(16)}\r\n${data}\r\n0\r\n\r\n`,
    );
    expect(out.body.toString()).toBe(data);
  });

  it('binary body bytes pass through unchanged', () => {
    const payload = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const bytes = Buffer.concat([latin1('HTTP/1.1 200 OK\r\nContent-Length: 256\r\n\r\n'), payload]);
    expect(feed(bytes).body).toEqual(payload);
    expect(feed(bytes, everyByte(bytes)).body).toEqual(payload);
  });

  it('header names keep their case and order; values lose surrounding SP/HTAB only', () => {
    const out = parse(
      'HTTP/1.1 200 OK\r\nX-Request-ID:  \t abc def \t\r\ncontent-type:text/event-stream\r\n' +
        'X-Empty:\r\nX-Blank:   \r\nX-Obs: caf\xe9\xa0\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n',
    );
    expect(out.heads[0]?.rawHeaders).toEqual([
      'X-Request-ID',
      'abc def',
      'content-type',
      'text/event-stream',
      'X-Empty',
      '',
      'X-Blank',
      '',
      'X-Obs',
      'caf\xe9\xa0',
      'Set-Cookie',
      'a=1',
      'Set-Cookie',
      'b=2',
      'Content-Length',
      '0',
    ]);
  });

  it('a status line may have no reason phrase, an empty one, or any text', () => {
    expect(parse('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n').heads[0]?.status).toBe(200);
    expect(parse('HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n').heads[0]?.status).toBe(404);
    expect(parse('HTTP/1.1 529 Site is overloaded: \xe9\r\nContent-Length: 0\r\n\r\n').heads[0]?.status).toBe(
      529,
    );
  });

  it('interim 100 and 103 responses are skipped, their headers unreported', () => {
    const out = parse(
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n' +
        'HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok',
    );
    expect(out.heads).toEqual([{ status: 201, rawHeaders: ['Content-Length', '2'] }]);
    expect(out.body.toString()).toBe('ok');
  });
});

describe('ResponseParser: reusable and finish()', () => {
  const cases: [string, string, boolean][] = [
    ['HTTP/1.1 with Content-Length', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi', true],
    ['HTTP/1.1 with Content-Length: 0', 'HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', true],
    ['HTTP/1.1 chunked', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n', true],
    [
      'HTTP/1.1, Connection: close',
      'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi',
      false,
    ],
    [
      'HTTP/1.1, Connection: Close in a list',
      'HTTP/1.1 200 OK\r\nConnection: te,  Close\r\nContent-Length: 0\r\n\r\n',
      false,
    ],
    [
      'HTTP/1.1, close in a second Connection',
      'HTTP/1.1 200 OK\r\nConnection: te\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
      false,
    ],
    ['HTTP/1.0 with Content-Length', 'HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi', false],
    ['HTTP/1.0 keep-alive', 'HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nhi', true],
    [
      'HTTP/1.0 keep-alive with Transfer-Encoding (RFC 9112 §6.1: closed after)',
      'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n',
      false,
    ],
  ];
  it.each(cases)('%s: reusable once read whole is %s', (_, text, reusable) => {
    const out = parse(text);
    expect(out.endsBeforeFinish).toBe(1);
    expect(out.reusable).toBe(reusable);
    expect(out.finished).toBe(true);
  });

  it('empty lines before a status line are skipped (as llhttp skips them), whole or split', () => {
    const text = '\r\n\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi';
    for (const out of [parse(text), feed(latin1(text), everyByte(latin1(text)))]) {
      expect(out.heads).toEqual([{ status: 200, rawHeaders: ['Content-Length', '2'] }]);
      expect(out.body.toString()).toBe('hi');
      expect(out.reusable).toBe(true);
    }
  });

  it('reusable only once the end has come', () => {
    const parser = new ResponseParser();
    parser.expect(new Recorder());
    parser.push(latin1('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nh'));
    expect(parser.reusable).toBe(false);
    parser.push(latin1('i'));
    expect(parser.reusable).toBe(true);
  });

  it('a body read until close ends on finish(), once, and is never reusable', () => {
    for (const text of [
      'HTTP/1.1 200 OK\r\n\r\nuntil close',
      'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nuntil close',
      'HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\nuntil close',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nuntil close',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nuntil close',
    ]) {
      const sink = new Recorder();
      const parser = new ResponseParser();
      parser.expect(sink);
      parser.push(latin1(text));
      expect(sink.body.toString()).toBe('until close');
      expect(sink.ends).toBe(0);
      expect(parser.reusable).toBe(false);
      expect(parser.finish()).toBe(true);
      expect(sink.ends).toBe(1);
      expect(parser.reusable).toBe(false);
      expect(parser.finish()).toBe(true);
      expect(sink.ends).toBe(1);
      expect(sink.faults).toEqual([]);
    }
  });

  it('a body read until close may be empty', () => {
    const out = parse('HTTP/1.1 500 Oops\r\n\r\n');
    expect(out.endsBeforeFinish).toBe(0);
    expect(out.finished).toBe(true);
    expect(out.ends).toBe(1);
    expect(out.body.length).toBe(0);
  });

  it.each([
    ['nothing', ''],
    ['half a status line', 'HTTP/1.1 20'],
    ['a head without its empty line', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n'],
    ['a head missing its last LF', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r'],
    ['an interim response only', 'HTTP/1.1 100 Continue\r\n\r\n'],
    ['a Content-Length body short by a byte', 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nhi'],
    ['a chunk short of its data', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhi'],
    ['a chunk without its CRLF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi'],
    [
      'a chunked body without its last chunk',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n',
    ],
    ['a last chunk without the empty line', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n'],
    ['a last chunk with half its CRLF', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r'],
    ['trailers without the empty line', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n'],
  ])('a response cut short after %s: finish() is false, no end', (_, text) => {
    const bytes = latin1(text);
    for (const out of [feed(bytes), feed(bytes, everyByte(bytes))]) {
      expect(out.error).toBeUndefined();
      expect(out.finished).toBe(false);
      expect(out.ends).toBe(0);
      expect(out.reusable).toBe(false);
    }
  });

  it('bytes after the response, in the same push or a later one, make it not reusable', () => {
    const response = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi';
    expect(feed(latin1(`${response}\r\n`)).reusable).toBe(false);
    const parser = new ResponseParser();
    const sink = new Recorder();
    parser.expect(sink);
    parser.push(latin1(response));
    expect(parser.reusable).toBe(true);
    parser.push(latin1('HTTP/1.1 200 OK\r\n'));
    expect(parser.reusable).toBe(false);
    expect(parser.finish()).toBe(true);
    expect(sink.ends).toBe(1);
    expect(sink.heads).toHaveLength(1);
  });

  it('one parser reads response after response on a kept connection', () => {
    const parser = new ResponseParser();
    const texts = [
      'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n',
      'HTTP/1.1 429 Too Many\r\nContent-Length: 5\r\nConnection: close\r\n\r\nthree',
    ];
    const seen: string[] = [];
    for (const text of texts) {
      const sink = new Recorder();
      parser.expect(sink);
      for (const byte of latin1(text)) parser.push(Buffer.from([byte]));
      expect(sink.ends).toBe(1);
      seen.push(`${sink.heads[0]?.status} ${sink.body} ${parser.reusable}`);
    }
    expect(seen).toEqual(['200 one true', '200 two true', '429 three false']);
  });
});

describe('ResponseParser: malformed responses', () => {
  const head = 'HTTP/1.1 200 OK\r\n';
  const chunked = `${head}Transfer-Encoding: chunked\r\n\r\n`;
  const cases: [string, string, string][] = [
    [
      'Transfer-Encoding with Content-Length',
      `${head}Transfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n`,
      'HPE_UNEXPECTED_CONTENT_LENGTH',
    ],
    [
      'Content-Length with Transfer-Encoding',
      `${head}Content-Length: 2\r\nTransfer-Encoding: gzip\r\n\r\n`,
      'HPE_UNEXPECTED_CONTENT_LENGTH',
    ],
    [
      'two differing Content-Lengths',
      `${head}Content-Length: 2\r\nContent-Length: 3\r\n\r\nhi`,
      'HPE_INVALID_CONTENT_LENGTH',
    ],
    [
      'a Content-Length list that differs',
      `${head}Content-Length: 2, 3\r\n\r\nhi`,
      'HPE_INVALID_CONTENT_LENGTH',
    ],
    [
      'a Content-Length list with an empty member',
      `${head}Content-Length: 2,\r\n\r\nhi`,
      'HPE_INVALID_CONTENT_LENGTH',
    ],
    ['a non-digit Content-Length', `${head}Content-Length: 2a\r\n\r\nhi`, 'HPE_INVALID_CONTENT_LENGTH'],
    ['a negative Content-Length', `${head}Content-Length: -1\r\n\r\n`, 'HPE_INVALID_CONTENT_LENGTH'],
    ['a signed Content-Length', `${head}Content-Length: +2\r\n\r\nhi`, 'HPE_INVALID_CONTENT_LENGTH'],
    ['a hex Content-Length', `${head}Content-Length: 0x2\r\n\r\nhi`, 'HPE_INVALID_CONTENT_LENGTH'],
    ['an empty Content-Length', `${head}Content-Length:\r\n\r\n`, 'HPE_INVALID_CONTENT_LENGTH'],
    [
      'a 16-digit Content-Length',
      `${head}Content-Length: 1000000000000000\r\n\r\n`,
      'HPE_INVALID_CONTENT_LENGTH',
    ],
    ['a non-hex chunk size', `${chunked}zz\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a missing chunk size', `${chunked}\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a 14-digit chunk size', `${chunked}1${'0'.repeat(13)}\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a 14-digit chunk size after zeros', `${chunked}0001${'0'.repeat(13)}\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a 0x chunk size', `${chunked}0x2\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a negative chunk size', `${chunked}-2\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a chunk size after whitespace', `${chunked} 2\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['junk after a chunk size', `${chunked}2 x\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a bare CR in a chunk size line', `${chunked}2\r;a\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['a chunk size line over 4 KiB', `${chunked}2;${'a'.repeat(4096)}\r\nhi\r\n`, 'HPE_INVALID_CHUNK_SIZE'],
    ['chunk data longer than its size', `${chunked}2\r\nhix\r\n0\r\n\r\n`, 'HPE_STRICT'],
    ['chunk data then CR and not LF', `${chunked}2\r\nhi\rx`, 'HPE_STRICT'],
    ['chunk data then CR CR LF', `${chunked}2\r\nhi\r\r\n0\r\n\r\n`, 'HPE_STRICT'],
    ['a header name with a space', `${head}X A: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a space before the colon', `${head}X-A : b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['an empty header name', `${head}: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a header line without a colon', `${head}X-A\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a header name with a separator', `${head}X(A): b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a header name with obs-text', `${head}X-\xe9: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a NUL in a value', `${head}X-A: a\x00b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a bare CR in a value', `${head}X-A: a\rb\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a bare CR ending a value', `${head}X-A: a\r\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a control character in a value', `${head}X-A: a\x01b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a line of a bare CR in the head', `${head}\rX-A: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a bad trailer', `${chunked}0\r\nBad Name: x\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['a trailer with a NUL', `${chunked}0\r\nX: a\x00\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['HTTP/2', 'HTTP/2 200 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['a status under 100', 'HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n', 'HPE_INVALID_STATUS'],
    [
      'a NUL in the reason phrase',
      'HTTP/1.1 200 O\x00K\r\nContent-Length: 0\r\n\r\n',
      'HPE_INVALID_CONSTANT',
    ],
    ['HTTP/1.2', 'HTTP/1.2 200 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['a lower-case protocol', 'http/1.1 200 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['another protocol', 'ICY 200 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['a two-digit status', 'HTTP/1.1 20 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['a four-digit status', 'HTTP/1.1 2000 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['no space after the status', 'HTTP/1.1 200OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['two spaces before the status', 'HTTP/1.1  200 OK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['a bare CR in the reason', 'HTTP/1.1 200 O\rK\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['empty lines, then no status line', '\r\n\nX-A: 1\r\n\r\n', 'HPE_INVALID_CONSTANT'],
    ['an HTML page', '<html><body>Bad gateway</body></html>\n\n', 'HPE_INVALID_CONSTANT'],
    [
      'a second response after 100 that is not HTTP',
      'HTTP/1.1 100 Continue\r\n\r\nnope\r\n\r\n',
      'HPE_INVALID_CONSTANT',
    ],
    [
      '101 Switching Protocols',
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n',
      'HPE_INVALID_STATUS',
    ],
    ['an obs-fold as the first header line', `${head} X-A: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
    ['an obs-fold by HTAB as the first header line', `${head}\tX-A: b\r\n\r\n`, 'HPE_INVALID_HEADER_TOKEN'],
  ];
  it.each(cases)('%s', (_, text, code) => {
    expect(errorOf(text)).toBe(code);
  });

  it('errors are HttpParseErrors with llhttp-style messages', () => {
    const parser = new ResponseParser();
    parser.expect(new Recorder());
    let error: unknown;
    try {
      parser.push(latin1('HTTP/1.1 101 Switching\r\n\r\n'));
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(HttpParseError);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'HttpParseError', code: 'HPE_INVALID_STATUS' });
    expect((error as Error).message).toMatch(/^Parse Error: /);
  });

  it('identical Content-Lengths, repeated or listed, are accepted', () => {
    for (const lengths of [
      'Content-Length: 2\r\nContent-Length: 2',
      'Content-Length: 2, 2',
      'Content-Length: 2,2 ,  2',
    ]) {
      const out = parse(`${head}${lengths}\r\n\r\nhi`);
      expect(out.body.toString()).toBe('hi');
      expect(out.reusable).toBe(true);
    }
  });

  it('a 13-digit chunk size is a size (the body is then cut short, not malformed); leading zeros are not digits', () => {
    const out = feed(latin1(`${chunked}000000000000f\r\n0123456789abcde\r\n0\r\n\r\n`));
    expect(out.error).toBeUndefined();
    expect(out.body.toString()).toBe('0123456789abcde');
    expect(out.ends).toBe(1);
    // Zero-padded beyond 13 digits, as node:http reads it: the zeros are not counted.
    const padded = feed(latin1(`${chunked}${'0'.repeat(40)}5\r\nhello\r\n${'0'.repeat(20)}\r\n\r\n`));
    expect(padded.error).toBeUndefined();
    expect(padded.body.toString()).toBe('hello');
    expect(padded.ends).toBe(1);
    const big = feed(latin1(`${chunked}fffffffffffff\r\nabc`));
    expect(big.error).toBeUndefined();
    expect(big.finished).toBe(false);
  });

  /** A head of exactly `size` bytes, its empty line included. */
  function headOf(size: number): string {
    const start = `${head}Content-Length: 0\r\nX-Pad: `;
    const end = '\r\n\r\n';
    return `${start}${'a'.repeat(size - start.length - end.length)}${end}`;
  }

  it('a head of MAX_HEAD_BYTES is read, whole or in pieces', () => {
    const text = headOf(MAX_HEAD_BYTES);
    expect(text.length).toBe(MAX_HEAD_BYTES);
    const bytes = latin1(text);
    for (const cuts of [[], everyByte(bytes), [100, 8000, MAX_HEAD_BYTES - 2, MAX_HEAD_BYTES - 1]]) {
      const out = feed(bytes, cuts);
      expect(out.error).toBeUndefined();
      expect(out.ends).toBe(1);
      expect(out.heads[0]?.rawHeaders[3]).toMatch(/^a+$/);
    }
    // Many headers, not one long one.
    const many = `${head}${'X-Many: 0123456789\r\n'.repeat(800)}Content-Length: 0\r\n\r\n`;
    expect(many.length).toBeLessThan(MAX_HEAD_BYTES);
    expect(parse(many).heads[0]?.rawHeaders).toHaveLength(1602);
  });

  it('a head over MAX_HEAD_BYTES is HPE_HEADER_OVERFLOW, whole or in pieces, with or without its end', () => {
    const over = latin1(headOf(MAX_HEAD_BYTES + 1));
    const endless = latin1(`${head}X-Pad: ${'a'.repeat(MAX_HEAD_BYTES)}`);
    for (const bytes of [over, endless, Buffer.concat([over, latin1('body bytes')])]) {
      for (const cuts of [[], everyByte(bytes), [10, 9000], [MAX_HEAD_BYTES - 1, MAX_HEAD_BYTES]]) {
        const out = feed(bytes, cuts);
        expect(out.error).toBe('HPE_HEADER_OVERFLOW');
        expect(out.heads).toEqual([]);
      }
    }
  });

  it('a large body after a small head is no overflow', () => {
    const payload = Buffer.alloc(3 * MAX_HEAD_BYTES, 'z');
    const bytes = Buffer.concat([latin1(`${head}Content-Length: ${payload.length}\r\n\r\n`), payload]);
    const out = feed(bytes);
    expect(out.error).toBeUndefined();
    expect(out.body).toEqual(payload);
  });

  it('a trailer section over MAX_HEAD_BYTES is HPE_HEADER_OVERFLOW', () => {
    expect(errorOf(`${chunked}0\r\nX-Pad: ${'a'.repeat(MAX_HEAD_BYTES)}\r\n\r\n`)).toBe(
      'HPE_HEADER_OVERFLOW',
    );
  });

  it('random bytes, in random pieces, never throw anything but an HttpParseError nor end twice', () => {
    const startArb = fc.constantFrom(
      '',
      'HTTP/1.1 200 OK\r\n',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n',
    );
    fc.assert(
      fc.property(startArb, fc.uint8Array({ maxLength: 300 }), cutsArb, (start, random, cuts) => {
        const bytes = Buffer.concat([latin1(start), random]);
        const out = feed(bytes, cutsFor(bytes, cuts));
        expect(out.faults).toEqual([]);
        expect(out.ends).toBeLessThanOrEqual(1);
      }),
      { seed: 404, numRuns: 500 },
    );
  });

  it('a valid response with random bytes changed parses, or fails, the same whole as split', () => {
    const editArb = fc.record({
      at: fc.nat(),
      kind: fc.constantFrom('replace', 'insert', 'delete'),
      byte: fc.oneof(
        fc.constantFrom(0x0d, 0x0a, 0x20, 0x09, 0x3a, 0x3b, 0x30, 0x00, 0x41),
        fc.integer({ min: 0, max: 255 }),
      ),
    });
    fc.assert(
      fc.property(
        responseArb,
        fc.array(editArb, { minLength: 1, maxLength: 4 }),
        cutsArb,
        (spec, edits, cuts) => {
          const bytes = [...build(spec).bytes];
          for (const { at, kind, byte } of edits) {
            const i = at % (bytes.length + 1);
            if (kind === 'insert') bytes.splice(i, 0, byte);
            else if (kind === 'delete') bytes.splice(i, 1);
            else bytes[i] = byte;
          }
          const edited = Buffer.from(bytes);
          const whole = feed(edited);
          expect(whole.faults).toEqual([]);
          expect(feed(edited, cutsFor(edited, cuts))).toEqual(whole);
        },
      ),
      { seed: 1945, numRuns: 500 },
    );
  });
});

describe('ResponseParser: obs-fold', () => {
  it('a line starting with SP or HTAB continues the value before it, joined by one space', () => {
    const out = parse(
      'HTTP/1.1 200 OK\r\nX-A: one\r\n   two  \r\n\tthree\r\nX-B: b\r\n \t\r\nX-C: c\n four\nContent-Length: 0\r\n\r\n',
    );
    expect(out.heads[0]?.rawHeaders).toEqual([
      'X-A',
      'one two three',
      'X-B',
      'b',
      'X-C',
      'c four',
      'Content-Length',
      '0',
    ]);
  });

  it('a folded Connection or Content-Length is read as its joined value', () => {
    const out = parse(
      'HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nContent-Length:\r\n 2\r\n\r\nhi',
    );
    expect(out.heads[0]?.rawHeaders).toEqual(['Connection', 'keep-alive, close', 'Content-Length', '2']);
    expect(out.reusable).toBe(false);
    expect(out.body.toString()).toBe('hi');
  });

  it.each([
    ['a NUL', 'HTTP/1.1 200 OK\r\nX-A: a\r\n b\x00c\r\nContent-Length: 0\r\n\r\n'],
    ['a bare CR', 'HTTP/1.1 200 OK\r\nX-A: a\r\n b\rc\r\nContent-Length: 0\r\n\r\n'],
  ])('a folded line may not carry %s, just as an unfolded value may not', (_, text) => {
    expect(errorOf(text)).toBe('HPE_INVALID_HEADER_TOKEN');
  });

  it('a folded line keeps its obs-text, a trailing 0xA0 included', () => {
    const out = parse('HTTP/1.1 200 OK\r\nX-A: a\r\n b\xa0\r\nContent-Length: 0\r\n\r\n');
    expect(out.heads[0]?.rawHeaders[1]).toBe('a b\xa0');
  });
});

describe('ResponseParser: 204 and 304', () => {
  it.each([204, 304])(
    '%i ends at its head whatever its framing headers say (RFC 9112 §6.3 rule 1)',
    (status) => {
      for (const framing of [
        'Content-Length: 5\r\n',
        'Transfer-Encoding: chunked\r\n',
        'Transfer-Encoding: chunked\r\nContent-Length: 5\r\n',
        'Content-Length: nonsense\r\n',
        '',
      ]) {
        const out = parse(`HTTP/1.1 ${status} X\r\n${framing}\r\n`);
        expect(out.heads[0]?.status).toBe(status);
        expect(out.endsBeforeFinish).toBe(1);
        expect(out.body.length).toBe(0);
        expect(out.reusable).toBe(true);
        // What follows is not its body: the connection is then spoiled.
        const after = feed(latin1(`HTTP/1.1 ${status} X\r\n${framing}\r\nhello`));
        expect(after.body.length).toBe(0);
        expect(after.ends).toBe(1);
        expect(after.reusable).toBe(false);
      }
    },
  );

  it('204 keeps Connection: close and HTTP/1.0 rules', () => {
    expect(parse('HTTP/1.1 204 X\r\nConnection: close\r\n\r\n').reusable).toBe(false);
    expect(parse('HTTP/1.0 204 X\r\n\r\n').reusable).toBe(false);
    expect(parse('HTTP/1.0 304 X\r\nConnection: keep-alive\r\n\r\n').reusable).toBe(true);
  });

  it('205 and other bodiless-by-convention statuses are framed as usual', () => {
    expect(parse('HTTP/1.1 205 Reset\r\nContent-Length: 2\r\n\r\nhi').body.toString()).toBe('hi');
    const out = parse('HTTP/1.1 205 Reset\r\n\r\nrest');
    expect(out.endsBeforeFinish).toBe(0);
    expect(out.body.toString()).toBe('rest');
  });
});
