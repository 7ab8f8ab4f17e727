import { type MessageDecoder, NdjsonDecoder, SseDecoder } from './decoders.js';
import { WireError } from './json.js';
import type { ResponseBuilder, WireResponse } from './response-builder.js';
import type { Wire } from './wire.js';

/**
 * Bytes of one streamed response → builder calls → the final response. Chunks are handled as
 * they arrive, so every event reaches `onEvent` as soon as its last byte is in.
 */
export interface StreamReader {
  push(chunk: Uint8Array): void;
  /** The body ended: the response, or a WireError when the stream was cut short. */
  end(): WireResponse;
}

export function createStreamReader(wire: Wire, builder: ResponseBuilder): StreamReader {
  const decoder: MessageDecoder = wire.streamFormat === 'sse' ? new SseDecoder() : new NdjsonDecoder();
  const translator = wire.createStream(builder);
  return {
    push(chunk) {
      for (const message of decoder.push(chunk)) translator.message(message);
    },
    end() {
      for (const message of decoder.end()) translator.message(message);
      if (!translator.complete) throw new WireError('the stream ended before the response was complete');
      return builder.finish();
    },
  };
}
