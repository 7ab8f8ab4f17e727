import { STATUS_CODES } from 'node:http';
import type { Exchange } from './exchange.js';
import { contentTypeOf, type Frame, formatFrame } from './frames.js';
import type { Fault, ScriptedReply } from './types.js';
import type { Refusal, StreamRendering, WireFormat } from './wire.js';

/** Writing replies, refusals and faults onto the socket. */
function baseHeaders(format: WireFormat, exchange: Exchange): Record<string, string> {
  const id = format.requestIdHeader ? { [format.requestIdHeader]: exchange.requestId } : {};
  return { ...id, ...exchange.replyHeaders };
}

export function sendRefusal(
  exchange: Exchange,
  format: WireFormat,
  refusal: Refusal,
  extraHeaders: Record<string, string> = {},
): void {
  const error = format.errorResponse(refusal, exchange.requestId);
  exchange.res.writeHead(refusal.status, {
    ...baseHeaders(format, exchange),
    ...error.headers,
    ...extraHeaders,
  });
  exchange.res.end(error.body);
}

function jsonBody(format: WireFormat, exchange: Exchange, reply: ScriptedReply): string {
  return JSON.stringify(format.renderJson(reply, exchange.record));
}

export function sendJson(exchange: Exchange, format: WireFormat, reply: ScriptedReply): void {
  exchange.res.writeHead(200, { ...baseHeaders(format, exchange), 'content-type': 'application/json' });
  exchange.res.end(jsonBody(format, exchange, reply));
}

async function writeFrames(
  exchange: Exchange,
  rendering: StreamRendering,
  frames: Frame[],
  delayMs?: number,
) {
  const res = exchange.res;
  for (const [i, frame] of frames.entries()) {
    if (exchange.closed) return;
    if (i > 0) await exchange.wait(delayMs);
    if (exchange.closed) return;
    res.write(formatFrame(frame, rendering.framing));
  }
}

function startStream(exchange: Exchange, format: WireFormat, rendering: StreamRendering): void {
  exchange.res.writeHead(200, {
    ...baseHeaders(format, exchange),
    'content-type': contentTypeOf(rendering.framing),
    'cache-control': 'no-cache',
  });
}

export async function sendStream(
  exchange: Exchange,
  format: WireFormat,
  reply: ScriptedReply,
): Promise<void> {
  const rendering = format.renderStream(reply, exchange.record);
  startStream(exchange, format, rendering);
  await writeFrames(exchange, rendering, rendering.frames, reply.chunkDelayMs);
  if (!exchange.closed) exchange.res.end();
}

const FAULT_MESSAGES: Record<number, string> = {
  400: 'Invalid request',
  401: 'Invalid API key',
  403: 'Permission denied',
  404: 'Model not found',
  413: 'Request too large',
  429: 'Rate limit exceeded, please retry later',
  500: 'Internal server error',
  503: 'Service unavailable',
  529: 'Overloaded',
};

export async function sendFault(
  exchange: Exchange,
  format: WireFormat,
  reply: ScriptedReply,
  fault: Fault,
): Promise<void> {
  const stream = exchange.record.stream;
  switch (fault.kind) {
    case 'status': {
      const message = fault.message ?? FAULT_MESSAGES[fault.status] ?? STATUS_CODES[fault.status] ?? 'error';
      const retryDelay = fault.retryDelay === undefined ? {} : { retryDelay: fault.retryDelay };
      sendRefusal(exchange, format, { status: fault.status, message, ...retryDelay }, fault.headers);
      return;
    }
    case 'hang':
      await exchange.untilClosed();
      return;
    case 'reset':
      exchange.destroy();
      return;
    case 'invalid-json':
      return stream ? sendInvalidStream(exchange, format, reply) : sendInvalidJson(exchange, format);
    case 'truncate':
      return stream
        ? sendTruncatedStream(exchange, format, reply)
        : sendTruncatedJson(exchange, format, reply);
    case 'mid-stream-error':
      return sendMidStreamError(exchange, format, reply, fault.message ?? 'Overloaded');
  }
}

function sendInvalidJson(exchange: Exchange, format: WireFormat): void {
  exchange.res.writeHead(200, { ...baseHeaders(format, exchange), 'content-type': 'application/json' });
  exchange.res.end('{"id": "fake", "content": [<html>not json</html>');
}

async function sendInvalidStream(
  exchange: Exchange,
  format: WireFormat,
  reply: ScriptedReply,
): Promise<void> {
  const rendering = format.renderStream(reply, exchange.record);
  const [first, ...rest] = rendering.frames;
  const broken: Frame = { kind: 'raw', text: '{"not json' };
  const event = first && first.kind !== 'comment' ? first.event : undefined;
  startStream(exchange, format, rendering);
  await writeFrames(
    exchange,
    rendering,
    [event ? { ...broken, event } : broken, ...rest],
    reply.chunkDelayMs,
  );
  if (!exchange.closed) exchange.res.end();
}

/** Headers promise the whole body; half of it is sent, then the socket is closed. */
function sendTruncatedJson(exchange: Exchange, format: WireFormat, reply: ScriptedReply): void {
  const body = Buffer.from(jsonBody(format, exchange, reply));
  exchange.res.writeHead(200, {
    ...baseHeaders(format, exchange),
    'content-type': 'application/json',
    'content-length': String(body.length),
  });
  exchange.res.write(body.subarray(0, Math.floor(body.length / 2)), () => exchange.destroy());
}

async function sendTruncatedStream(
  exchange: Exchange,
  format: WireFormat,
  reply: ScriptedReply,
): Promise<void> {
  const rendering = format.renderStream(reply, exchange.record);
  const bytes = Buffer.from(rendering.frames.map((f) => formatFrame(f, rendering.framing)).join(''));
  startStream(exchange, format, rendering);
  exchange.res.write(bytes.subarray(0, Math.floor(bytes.length / 2)), () => exchange.destroy());
}

async function sendMidStreamError(
  exchange: Exchange,
  format: WireFormat,
  reply: ScriptedReply,
  message: string,
): Promise<void> {
  if (!exchange.record.stream) {
    sendRefusal(exchange, format, {
      status: 500,
      message: 'fake-llm: the mid-stream-error fault needs a streamed request',
    });
    return;
  }
  const rendering = format.renderStream(reply, exchange.record);
  const kept = rendering.frames.slice(0, Math.max(1, Math.ceil(rendering.frames.length / 2)));
  startStream(exchange, format, rendering);
  await writeFrames(
    exchange,
    rendering,
    [...kept, format.streamError(message, exchange.requestId)],
    reply.chunkDelayMs,
  );
  if (!exchange.closed) exchange.res.end();
}
