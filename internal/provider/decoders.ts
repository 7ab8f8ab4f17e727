/**
 * Incremental stream decoders. Bytes arrive in chunks whose boundaries may fall anywhere —
 * inside a UTF-8 character, inside `\r\n`, inside a field — so both decoders keep a streaming
 * TextDecoder and the unfinished line between pushes.
 */

/** One framed message: an SSE event (`event` set when named) or one NDJSON line. */
export interface WireMessage {
  event?: string;
  data: string;
}

export interface MessageDecoder {
  push(chunk: Uint8Array): WireMessage[];
  /** The stream ended: flush what is left. */
  end(): WireMessage[];
}

const LINE_END = /[\r\n]/g;

/**
 * Splits text into lines on `\r\n`, `\n` or `\r`, remembering a `\r` that ended a chunk. Each
 * chunk is searched once, from its own start: the unfinished line is kept as pieces and joined
 * only when its end arrives, so a line of n bytes in k chunks costs O(n), not O(n·k).
 */
export class LineSplitter {
  private readonly decoder = new TextDecoder('utf-8');
  /** The unfinished line, as the pieces of the chunks it spans. */
  private pending: string[] = [];
  private skipLeadingLf = false;
  /** Characters searched for a line end so far: each one once (the linear-time test reads it). */
  scanned = 0;

  push(chunk: Uint8Array, onLine: (line: string) => void): void {
    this.feed(this.decoder.decode(chunk, { stream: true }), onLine);
  }

  end(onLine: (line: string) => void): void {
    this.feed(this.decoder.decode(), onLine);
    if (this.pending.length > 0) onLine(this.take(''));
  }

  private feed(text: string, onLine: (line: string) => void): void {
    if (text === '') return;
    let start = 0;
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (text[0] === '\n') start = 1;
    }
    // The regular expression looks at text[start…] up to the next line end, or to the end.
    for (;;) {
      LINE_END.lastIndex = start;
      const match = LINE_END.exec(text);
      if (match === null) break;
      const end = match.index;
      this.scanned += end + 1 - start;
      onLine(this.take(text.slice(start, end)));
      start = end + 1;
      if (text[end] === '\r') {
        if (end + 1 === text.length) this.skipLeadingLf = true;
        else if (text[end + 1] === '\n') start = end + 2;
      }
    }
    this.scanned += text.length - start;
    if (start < text.length) this.pending.push(text.slice(start));
  }

  /** The unfinished line with its last piece, and a fresh start. */
  private take(last: string): string {
    if (this.pending.length === 0) return last;
    this.pending.push(last);
    const line = this.pending.join('');
    this.pending = [];
    return line;
  }
}

/** Turns lines into messages; `flush` runs once after the last line. */
abstract class LineMessageDecoder implements MessageDecoder {
  private readonly lines = new LineSplitter();

  push(chunk: Uint8Array): WireMessage[] {
    const out: WireMessage[] = [];
    this.lines.push(chunk, (line) => this.line(line, out));
    return out;
  }

  end(): WireMessage[] {
    const out: WireMessage[] = [];
    this.lines.end((line) => this.line(line, out));
    this.flush(out);
    return out;
  }

  protected abstract line(line: string, out: WireMessage[]): void;

  protected flush(_out: WireMessage[]): void {}
}

/** Server-sent events: named and data-only events, comment lines ignored, multi-line data joined. */
export class SseDecoder extends LineMessageDecoder {
  private event: string | undefined;
  private data: string[] = [];

  /** A final event without its blank line is still delivered. */
  protected override flush(out: WireMessage[]): void {
    this.line('', out);
  }

  protected line(line: string, out: WireMessage[]): void {
    if (line === '') {
      if (this.data.length > 0) {
        // One data line (the usual event) as it is: join would copy it, 32 MiB for the longest.
        const data = this.data.length === 1 ? (this.data[0] as string) : this.data.join('\n');
        out.push(this.event === undefined ? { data } : { event: this.event, data });
      }
      this.event = undefined;
      this.data = [];
      return;
    }
    if (line[0] === ':') return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value[0] === ' ') value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/** Newline-delimited JSON: one message per non-blank line. */
export class NdjsonDecoder extends LineMessageDecoder {
  protected line(line: string, out: WireMessage[]): void {
    if (line.trim() !== '') out.push({ data: line });
  }
}
