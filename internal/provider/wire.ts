import type { WireMessage } from './decoders.js';
import type { ErrorInfo } from './json.js';
import type { ResponseBuilder, WireResponse } from './response-builder.js';
import type { ChatRequest, JsonObject, JsonValue, ProviderSettings } from './types.js';

/** Turns one wire's stream messages into `ResponseBuilder` calls. */
export interface StreamTranslator {
  /** Throws a WireError for the wire's error event or a malformed message. */
  message(message: WireMessage): void;
  /** True once the wire's closing event was seen (a stream that ends before it was truncated). */
  readonly complete: boolean;
}

/**
 * Everything that differs between providers: pure translation to and from one wire format.
 * Adding a provider means writing one of these; the sender (client.ts) does the rest.
 */
export interface Wire {
  /** `none`: the wire has no streaming endpoint axe uses; a streamed call is answered whole. */
  readonly streamFormat: 'sse' | 'ndjson' | 'none';
  url(baseUrl: string, request: ChatRequest): string;
  authHeaders(apiKey: string | undefined): Record<string, string>;
  toWire(request: ChatRequest): JsonObject;
  fromWire(json: JsonValue): WireResponse;
  createStream(builder: ResponseBuilder): StreamTranslator;
  /** The provider's own message and error type from an error body (either may be absent). */
  errorInfo(json: JsonValue): ErrorInfo;
  /**
   * Wires that sign each request (AWS SigV4): the headers to add, worked out just before the
   * request goes out. Throws a ConfigError (exit 2) or RuntimeError for missing settings.
   */
  sign?(request: SignableRequest, settings: ProviderSettings): Promise<Record<string, string>>;
}

export interface SignableRequest {
  url: string;
  body: string;
}

export function trimSlash(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '');
}

/** `Authorization: Bearer <key>` (OpenAI and Ollama); no header without a key. */
export function bearerAuth(apiKey: string | undefined): Record<string, string> {
  return apiKey === undefined ? {} : { authorization: `Bearer ${apiKey}` };
}

/**
 * Adjacent turns of the same role joined into one (their `key` arrays concatenated), for APIs that
 * require roles to alternate (Bedrock, Gemini): tool results followed by a user message, say.
 */
export function mergeSameRole(turns: JsonObject[], key: string): JsonObject[] {
  const merged: JsonObject[] = [];
  for (const turn of turns) {
    const last = merged.at(-1);
    const before = last?.[key];
    const after = turn[key];
    if (last && last.role === turn.role && Array.isArray(before) && Array.isArray(after)) {
      merged[merged.length - 1] = { ...last, [key]: [...before, ...after] };
    } else {
      merged.push(turn);
    }
  }
  return merged;
}
