import { FIELD_CHARS, TCHARS, TOKEN, VISIBLE_CHARS } from './syntax.js';

/**
 * An incremental HTTP/1.1 response parser (RFC 9112) for one connection: bytes go in as the socket
 * delivers them, split anywhere, and the response's head, its body's pieces and its end come out.
 * It is as strict as Node's own (llhttp) where a lax reading would let a response be framed two
 * ways: Transfer-Encoding beside Content-Length, differing Content-Lengths, a malformed chunk size
 * are errors; so is a head over 16 KiB.
 */

/** Node's default `maxHeaderSize`: a head (status line and headers) or trailer section at most this long. */
export const MAX_HEAD_BYTES = 16 * 1024;

/** A response the parser cannot frame; `code` names the fault as llhttp's codes do (`HPE_…`). */
export class HttpParseError extends Error {
  readonly code: string;
  constructor(code: string, reason: string) {
    super(`Parse Error: ${reason}`);
    this.name = 'HttpParseError';
    this.code = code;
  }
}

export interface ResponseHead {
  status: number;
  /** Header names and values in order, as received (`IncomingMessage.rawHeaders`). */
  rawHeaders: string[];
}

/** What the parser reports to: one connection's current exchange. */
export interface ResponseSink {
  onHead(head: ResponseHead): void;
  onBody(chunk: Buffer): void;
  onEnd(): void;
}

enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

const LF = 0x0a;
const CR = 0x0d;
const HTTP = Buffer.from('HTTP/', 'latin1');
const STATUS_LINE = new RegExp(`HTTP/1\\.([01]) (\\d{3})(?: [${FIELD_CHARS}]*)?\\r?\\n`, 'y');
// A field value: from its first visible character on (its trailing SP/HTAB included).
const VALUE = `((?:[${VISIBLE_CHARS}][${FIELD_CHARS}]*)?)\\r?\\n`;
// One field line, read where the last one ended: a token, a colon, SP/HTAB, the value. No two
// parts of the pattern can take the same byte, so a bad line fails in one pass, however long.
const FIELD_LINE = new RegExp(`([${TCHARS}]+):[\\t ]*${VALUE}`, 'y');
// An obsolete folded line (RFC 9112 §5.2): more of the value before it.
const FOLDED_LINE = new RegExp(`[\\t ]+${VALUE}`, 'y');
// Leading zeros are no part of the value (llhttp takes any number); at most 13 hex digits after
// them, so that the size is exact in a double.
const CHUNK_SIZE = /^0*([0-9A-Fa-f]{1,13})[\t ]*(?:;[^\r]*)?$/;
/** A chunk-size line, extensions included, at most this long. */
const MAX_CHUNK_LINE = 4096;

export class ResponseParser {
  #state = State.Head;
  /** Bytes of a head, chunk-size line or trailer section not yet complete. */
  #pending: Buffer | undefined;
  /** Bytes of the current body part still to come (Length, ChunkData). */
  #remaining = 0;
  #keepAlive = false;
  #sink: ResponseSink | undefined;
  /** Bytes arrived after the response was complete: the connection cannot be reused. */
  #extra = false;
  /** The CR of the CRLF after a chunk's data has come (ChunkDataEnd). */
  #sawCr = false;

  /** Starts reading the response to the request just sent, reporting to `sink`. */
  expect(sink: ResponseSink): void {
    this.#sink = sink;
    this.#state = State.Head;
    this.#pending = undefined;
    this.#extra = false;
    this.#sawCr = false;
  }

  /** The response is read whole. */
  get complete(): boolean {
    return this.#state === State.Done;
  }

  /** The response is read whole and nothing followed it: its connection may carry the next request. */
  get reusable(): boolean {
    return this.complete && this.#keepAlive && !this.#extra;
  }

  /** Reads `data`; throws HttpParseError on a malformed response. */
  push(data: Buffer): void {
    let at = 0;
    while (at < data.length) {
      switch (this.#state) {
        case State.Head:
          at = this.#readHead(data, at);
          break;
        case State.Length:
        case State.ChunkData:
        case State.UntilClose:
          at = this.#readBody(data, at);
          break;
        case State.ChunkSize:
          at = this.#readChunkSize(data, at);
          break;
        case State.ChunkDataEnd:
          at = this.#readChunkDataEnd(data, at);
          break;
        case State.Trailers:
          at = this.#readTrailers(data, at);
          break;
        case State.Done:
          this.#extra = true;
          return;
      }
    }
  }

  /**
   * The connection ended. True when that ends the response (a body read until close); false when
   * the response was cut short or never came.
   */
  finish(): boolean {
    if (this.#state === State.UntilClose) {
      this.#end();
      return true;
    }
    return this.complete;
  }

  /**
   * A whole section, gathered across pushes in #pending: its text (latin1, a character per byte)
   * and where `data` goes on after it, or, while it is not complete, where `data` ends. At most
   * MAX_HEAD_BYTES.
   */
  #gather(data: Buffer, at: number): [string, number] | number {
    const before = this.#pending?.length ?? 0;
    const buffer = before === 0 ? data : Buffer.concat([this.#pending as Buffer, data.subarray(at)]);
    const start = before === 0 ? at : 0;
    // No more of the bytes than a section may take (and its empty line): a body may follow.
    const text = buffer.toString('latin1', start, Math.min(buffer.length, start + MAX_HEAD_BYTES + 4));
    // Search from a little before the new bytes: the end may straddle the split.
    const end = sectionEnd(text, Math.max(0, before - 2));
    if (end === -1) {
      if (buffer.length - start > MAX_HEAD_BYTES)
        throw new HttpParseError('HPE_HEADER_OVERFLOW', 'Header overflow');
      // A copy of its own: the pending bytes outlive this push, however its caller reuses `data`.
      this.#pending = Buffer.from(buffer.subarray(start));
      return data.length;
    }
    if (end > MAX_HEAD_BYTES) throw new HttpParseError('HPE_HEADER_OVERFLOW', 'Header overflow');
    this.#pending = undefined;
    return [end === text.length ? text : text.slice(0, end), at + end - before];
  }

  #readHead(data: Buffer, at: number): number {
    // Empty lines before a status line are skipped, as llhttp skips them.
    if (this.#pending === undefined) {
      while (at < data.length && (data[at] === CR || data[at] === LF)) at++;
      if (at === data.length) return at;
    }
    // Not an HTTP response at all (an SSH banner, a TLS alert): said at once, not when a head ends.
    const before = this.#pending?.length ?? 0;
    if (before < HTTP.length) {
      const start = before === 0 ? data : Buffer.concat([this.#pending as Buffer, data.subarray(at)]);
      const from = before === 0 ? at : 0;
      for (let i = 0; i < HTTP.length && from + i < start.length; i++) {
        if (start[from + i] !== HTTP[i]) throw new HttpParseError('HPE_INVALID_CONSTANT', 'Expected HTTP/');
      }
    }
    const gathered = this.#gather(data, at);
    if (typeof gathered === 'number') return gathered;
    const [head, next] = gathered;
    STATUS_LINE.lastIndex = 0;
    const status = STATUS_LINE.exec(head);
    if (!status) throw new HttpParseError('HPE_INVALID_CONSTANT', 'Expected HTTP/');
    const minor = status[1];
    const code = Number(status[2]);
    const rawHeaders = parseFields(head, STATUS_LINE.lastIndex);
    if (code < 100) throw new HttpParseError('HPE_INVALID_STATUS', 'Invalid status code');
    if (code < 200) {
      // 1xx: an interim response (100 Continue, 103 Early Hints); the final one follows.
      if (code === 101) throw new HttpParseError('HPE_INVALID_STATUS', 'Unexpected protocol switch');
      return next;
    }
    this.#frame(code, minor === '1', rawHeaders);
    return next;
  }

  /** How the body is delimited (RFC 9112 §6.3), and whether the connection outlives it. */
  #frame(status: number, http11: boolean, rawHeaders: string[]): void {
    let connection = '';
    let transferEncoding: string | undefined;
    let contentLength: string | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = (rawHeaders[i] as string).toLowerCase();
      const value = rawHeaders[i + 1] as string;
      if (name === 'connection') connection += `,${value.toLowerCase()}`;
      else if (name === 'transfer-encoding') transferEncoding = join(transferEncoding, value);
      else if (name === 'content-length') contentLength = join(contentLength, value);
    }
    const tokens = connection === '' ? [] : connection.split(',').map((token) => token.trim());
    this.#keepAlive = http11 ? !tokens.includes('close') : tokens.includes('keep-alive');
    let state: State;
    if (status === 204 || status === 304) {
      state = State.Done;
    } else if (transferEncoding !== undefined) {
      if (contentLength !== undefined) {
        throw new HttpParseError(
          'HPE_UNEXPECTED_CONTENT_LENGTH',
          "Content-Length can't be present with Transfer-Encoding",
        );
      }
      const codings = transferEncoding.split(',').map((coding) => coding.trim().toLowerCase());
      state = codings.at(-1) === 'chunked' ? State.ChunkSize : State.UntilClose;
    } else if (contentLength !== undefined) {
      const lengths = new Set(contentLength.split(',').map((length) => length.trim()));
      const [length] = lengths;
      if (lengths.size !== 1 || !/^\d{1,15}$/.test(length as string)) {
        throw new HttpParseError('HPE_INVALID_CONTENT_LENGTH', 'Invalid Content-Length');
      }
      this.#remaining = Number(length);
      state = this.#remaining === 0 ? State.Done : State.Length;
    } else {
      state = State.UntilClose;
    }
    // A body read until the connection closes leaves no connection to reuse; nor does an HTTP/1.0
    // response with Transfer-Encoding (RFC 9112 §6.1).
    if (state === State.UntilClose || (!http11 && transferEncoding !== undefined)) this.#keepAlive = false;
    (this.#sink as ResponseSink).onHead({ status, rawHeaders });
    if (state === State.Done) this.#end();
    else this.#state = state;
  }

  #readBody(data: Buffer, at: number): number {
    if (this.#state === State.UntilClose) {
      (this.#sink as ResponseSink).onBody(at === 0 ? data : data.subarray(at));
      return data.length;
    }
    const take = Math.min(this.#remaining, data.length - at);
    this.#remaining -= take;
    (this.#sink as ResponseSink).onBody(take === data.length ? data : data.subarray(at, at + take));
    if (this.#remaining === 0) {
      if (this.#state === State.Length) this.#end();
      else this.#state = State.ChunkDataEnd;
    }
    return at + take;
  }

  #readChunkSize(data: Buffer, at: number): number {
    const lf = data.indexOf(LF, at);
    const until = lf === -1 ? data.length : lf;
    const pending = this.#pending;
    if ((pending?.length ?? 0) + until - at > MAX_CHUNK_LINE)
      throw new HttpParseError('HPE_INVALID_CHUNK_SIZE', 'Chunk size line too long');
    if (lf === -1) {
      this.#pending = Buffer.concat(pending ? [pending, data.subarray(at)] : [data.subarray(at)]);
      return data.length;
    }
    this.#pending = undefined;
    const text =
      pending === undefined
        ? data.toString('latin1', at, lf)
        : Buffer.concat([pending, data.subarray(at, lf)]).toString('latin1');
    const size = CHUNK_SIZE.exec(text.endsWith('\r') ? text.slice(0, -1) : text);
    if (!size) throw new HttpParseError('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size');
    this.#remaining = Number.parseInt(size[1] as string, 16);
    if (this.#remaining === 0) {
      this.#state = State.Trailers;
    } else {
      this.#state = State.ChunkData;
    }
    return lf + 1;
  }

  /** The CRLF (or bare LF) that closes a chunk's data. */
  #readChunkDataEnd(data: Buffer, at: number): number {
    const byte = data[at];
    if (byte === CR && !this.#sawCr) {
      this.#sawCr = true;
      return at + 1;
    }
    if (byte !== LF) throw new HttpParseError('HPE_STRICT', 'Expected LF after chunk data');
    this.#sawCr = false;
    this.#state = State.ChunkSize;
    return at + 1;
  }

  /** Trailer fields after the last chunk, up to the empty line: checked, and dropped. */
  #readTrailers(data: Buffer, at: number): number {
    const gathered = this.#gather(data, at);
    if (typeof gathered === 'number') return gathered;
    const [section, next] = gathered;
    if (section.length > 2) parseFields(section, 0);
    this.#end();
    return next;
  }

  #end(): void {
    this.#state = State.Done;
    (this.#sink as ResponseSink).onEnd();
  }
}

/** Where a line-ended section (head, trailers) ends in `text`, after its empty line; -1 when not yet. */
function sectionEnd(text: string, from: number): number {
  // A section that is its empty line alone: trailers, when there are none.
  if (from === 0 && text.charCodeAt(0) === LF) return 1;
  if (from === 0 && text.charCodeAt(0) === CR && text.charCodeAt(1) === LF) return 2;
  for (let lf = text.indexOf('\n', from); lf !== -1; lf = text.indexOf('\n', lf + 1)) {
    const next = text.charCodeAt(lf + 1);
    if (next === LF) return lf + 2;
    if (next === CR && text.charCodeAt(lf + 2) === LF) return lf + 3;
  }
  return -1;
}

function join(seen: string | undefined, value: string): string {
  return seen === undefined ? value : `${seen}, ${value}`;
}

/**
 * The field lines of a section (a head after its status line, or trailers), from `at` up to the
 * empty line that ends it, as name, value pairs: values without their surrounding SP/HTAB, an
 * obsolete folded line joined to the value before it with one SP.
 */
function parseFields(section: string, at: number): string[] {
  const raw: string[] = [];
  // The empty line: `\n` or `\r\n`, the section's last bytes.
  const end = section.length - (section.charCodeAt(section.length - 2) === CR ? 2 : 1);
  while (at < end) {
    FIELD_LINE.lastIndex = at;
    const field = FIELD_LINE.exec(section);
    if (field) {
      raw.push(field[1] as string, trimOws(field[2] as string));
      at = FIELD_LINE.lastIndex;
      continue;
    }
    FOLDED_LINE.lastIndex = at;
    const folded = raw.length > 0 ? FOLDED_LINE.exec(section) : null;
    if (!folded) throw fieldError(section.slice(at, section.indexOf('\n', at)), raw.length === 0);
    raw[raw.length - 1] = trimOws(`${raw[raw.length - 1]} ${folded[1]}`);
    at = FOLDED_LINE.lastIndex;
  }
  return raw;
}

/** What is wrong with a field line the patterns refused. */
function fieldError(line: string, first: boolean): HttpParseError {
  const folded = line.startsWith(' ') || line.startsWith('\t');
  if (folded && first) return new HttpParseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header field char');
  const colon = line.indexOf(':');
  if (!folded && !TOKEN.test(colon === -1 ? '' : line.slice(0, colon))) {
    return new HttpParseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header token');
  }
  return new HttpParseError('HPE_INVALID_HEADER_TOKEN', 'Invalid header value char');
}

function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && (text[start] === ' ' || text[start] === '\t')) start++;
  while (end > start && (text[end - 1] === ' ' || text[end - 1] === '\t')) end--;
  return text.slice(start, end);
}
