/** The most one message (one line) may take: the MCP SDK's own stdio limit. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;
/** How much of each end of an oversize line is kept: enough for its `id`, `method`, `jsonrpc`. */
const KEPT_BYTES = 1024;

/** A line too long to keep: its size (newline excluded) and its first and last bytes. */
export interface OversizeLine {
  bytes: number;
  head: string;
  tail: string;
}

export type Line = { text: string } | { oversize: OversizeLine };

/**
 * Splits a byte stream into lines as the SDK's ReadBuffer does, except for a line over
 * `maxBytes`: the ReadBuffer throws (and the connection is lost); here that line is skipped to
 * its end, keeping only its size and both ends, and the lines after it are read as usual.
 */
export class JsonLines {
  private parts: Buffer[] = [];
  private size = 0;
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;

  constructor(private readonly maxBytes = MAX_LINE_BYTES) {}

  push(chunk: Buffer): Line[] {
    const lines: Line[] = [];
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(0x0a, start);
      this.add(chunk.subarray(start, newline === -1 ? chunk.length : newline));
      if (newline === -1) return lines;
      lines.push(this.take());
      start = newline + 1;
    }
  }

  clear(): void {
    this.parts = [];
    this.size = 0;
    this.skipping = undefined;
  }

  private add(piece: Buffer): void {
    if (piece.length === 0) return;
    const skipping = this.skipping;
    if (skipping) {
      skipping.bytes += piece.length;
      if (skipping.head.length < KEPT_BYTES)
        skipping.head = Buffer.concat([skipping.head, piece.subarray(0, KEPT_BYTES - skipping.head.length)]);
      skipping.tail = lastBytes([skipping.tail, piece]);
    } else if (this.size + piece.length > this.maxBytes) {
      const all = [...this.parts, piece];
      this.skipping = {
        bytes: this.size + piece.length,
        head: Buffer.from(Buffer.concat(all).subarray(0, KEPT_BYTES)),
        tail: lastBytes(all),
      };
      this.parts = [];
      this.size = 0;
    } else {
      this.parts.push(piece);
      this.size += piece.length;
    }
  }

  private take(): Line {
    const skipped = this.skipping;
    if (skipped) {
      this.skipping = undefined;
      return {
        oversize: {
          bytes: skipped.bytes,
          head: skipped.head.toString('utf8'),
          tail: skipped.tail.toString('utf8'),
        },
      };
    }
    const text = Buffer.concat(this.parts, this.size).toString('utf8').replace(/\r$/, '');
    this.parts = [];
    this.size = 0;
    return { text };
  }
}

/** The last KEPT_BYTES of the buffers put end to end, as a copy (not a view of a large chunk). */
function lastBytes(buffers: Buffer[]): Buffer {
  const kept: Buffer[] = [];
  let size = 0;
  for (let i = buffers.length - 1; i >= 0 && size < KEPT_BYTES; i--) {
    const buffer = buffers[i]!;
    const part = buffer.subarray(Math.max(0, buffer.length - (KEPT_BYTES - size)));
    kept.unshift(part);
    size += part.length;
  }
  return Buffer.concat(kept, size);
}

/**
 * What an oversize line is, from its two ends: a response (`result` or `error` comes before any
 * `method`), with its `id` when either end shows it at the top level; a request or notification
 * from the server (`method`); or neither (not JSON-RPC, or an order of keys not recognised).
 * Servers written with the TypeScript SDK put `id` last (`{"result":…,"jsonrpc":"2.0","id":7}`),
 * Python ones first (`{"jsonrpc":"2.0","id":7,"result":…}`).
 */
export function classifyOversize(line: OversizeLine): { kind: 'response' | 'other'; id?: string | number } {
  let id: string | number | undefined;
  // The top-level keys the head shows before the first object or array value.
  const scalar = /^\s*"((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|true|false|null)\s*,/;
  const opening = /^\s*"((?:[^"\\]|\\.)*)"\s*:\s*[[{"]/;
  let rest = line.head.replace(/^\s*\{/, '');
  if (rest === line.head) return { kind: 'other' };
  for (;;) {
    const match = scalar.exec(rest);
    if (!match) break;
    if (match[1] === 'method') return { kind: 'other' };
    if (match[1] === 'id') id = JSON.parse(match[2]!) as string | number;
    rest = rest.slice(match[0].length);
  }
  const key = opening.exec(rest)?.[1];
  if (key !== 'result' && key !== 'error') return { kind: 'other' };
  // Only the top level closes with a single brace after `"id":…` (and maybe `"jsonrpc"`).
  const tail = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$/.exec(
    line.tail,
  );
  if (id === undefined && tail) id = JSON.parse(tail[1]!) as string | number;
  return id === undefined ? { kind: 'response' } : { kind: 'response', id };
}
