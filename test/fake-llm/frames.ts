/** Stream frames and how each wire frames them on the socket. */
export type Frame =
  | { kind: 'data'; event?: string; data: unknown }
  /** Payload sent as-is (to simulate data that is not JSON). */
  | { kind: 'raw'; event?: string; text: string }
  | { kind: 'comment'; text: string };

/** `sse` for Anthropic / OpenAI, `sse-crlf` for Gemini, `ndjson` for Ollama. */
export type Framing = 'sse' | 'sse-crlf' | 'ndjson';

export function contentTypeOf(framing: Framing): string {
  return framing === 'ndjson' ? 'application/x-ndjson' : 'text/event-stream';
}

export function formatFrame(frame: Frame, framing: Framing): string {
  const payload = frame.kind === 'data' ? JSON.stringify(frame.data) : frame.text;
  if (framing === 'ndjson') return `${payload}\n`;
  const eol = framing === 'sse-crlf' ? '\r\n' : '\n';
  if (frame.kind === 'comment') return `: ${payload}${eol}${eol}`;
  const event = frame.event === undefined ? '' : `event: ${frame.event}${eol}`;
  return `${event}data: ${payload}${eol}${eol}`;
}

/** Splits text into a few deltas (by code point, so no character is cut), at least two when possible. */
export function splitDeltas(text: string, pieces = 3): string[] {
  const chars = Array.from(text);
  if (chars.length <= 1) return chars.length === 0 ? [] : [text];
  const size = Math.max(1, Math.ceil(chars.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}
