import type { Frame, Framing } from './frames.js';
import type { RecordedRequest, ScriptedReply, Wire } from './types.js';

/** What the server knows about a request before a wire looks at it. */
export interface IncomingRequest {
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: unknown;
  /** The body as received (what a signature covers). */
  text?: string;
  /** The path exactly as received, percent-escapes kept (what a signature covers). */
  rawPath?: string;
  /** Google and Bedrock carry the model in the path. */
  pathModel?: string;
}

/** Why a request is refused; the wire renders it as its own error body. */
export interface Refusal {
  status: number;
  message: string;
  /** OpenAI `param` / `code`, when the real service sets them. */
  param?: string;
  code?: string;
  /** Gemini's `RetryInfo.retryDelay` (`"34.4s"`), sent in the error's details. */
  retryDelay?: string;
}

/** The fields of RecordedRequest that depend on the wire's body shape. */
export type RequestSummary = Pick<
  RecordedRequest,
  'model' | 'stream' | 'system' | 'lastUserText' | 'toolNames' | 'toolResults'
>;

export interface ErrorResponse {
  headers: Record<string, string>;
  body: string;
}

export interface StreamRendering {
  framing: Framing;
  frames: Frame[];
}

/** One wire format: validation, summary for recording, and rendering of scripted replies. */
export interface WireFormat {
  wire: Wire;
  /** Tolerates malformed bodies: missing pieces become empty values. */
  summarize(request: IncomingRequest): RequestSummary;
  validate(request: IncomingRequest): Refusal | undefined;
  errorResponse(refusal: Refusal, requestId: string): ErrorResponse;
  /** Header that carries the request id on every response, when the real service sends one. */
  requestIdHeader?: string;
  renderJson(reply: ScriptedReply, request: RecordedRequest): unknown;
  renderStream(reply: ScriptedReply, request: RecordedRequest): StreamRendering;
  /** The wire's in-stream error event. */
  streamError(message: string, requestId: string): Frame;
}
