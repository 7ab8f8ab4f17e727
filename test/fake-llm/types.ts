/**
 * The scripting contract of the fake LLM server (test/fake-llm/). Tests start one server per file
 * (or per test), script its replies in provider-neutral terms, and the server renders them in the
 * wire format of whichever API the request came in on — JSON or streamed.
 *
 * Routing by path:
 *   anthropic  POST /v1/messages                                  (base = server.url)
 *   openai     POST /v1/chat/completions                          (base = server.url + '/v1')
 *   responses  POST /v1/responses                                 (base = server.url + '/v1')
 *   bedrock    POST /model/{modelId}/converse                     (base = server.url; SigV4 with the
 *              fake's credentials, FAKE_AWS_ACCESS_KEY_ID / FAKE_AWS_SECRET_ACCESS_KEY)
 *   ollama     POST /api/chat                                     (base = server.url)
 *   google     POST /v1beta/models/{model}:generateContent        (base = server.url)
 *              POST /v1beta/models/{model}:streamGenerateContent?alt=sse
 *
 * Every request is validated as strictly as the real service; a malformed one gets the real
 * service's status and error body, and is recorded with `rejection` set.
 */
export type Wire = 'anthropic' | 'openai' | 'ollama' | 'google' | 'responses' | 'bedrock';

export interface RecordedRequest {
  /** 0-based arrival order. */
  index: number;
  wire: Wire;
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Parsed JSON body (undefined when it did not parse). */
  body: unknown;
  /** The body's bytes as received (UTF-8). */
  text: string;
  model: string;
  stream: boolean;
  /** The system prompt text, however the wire carries it. */
  system: string;
  /** Text of the last user message (tool results excluded), for routing replies. */
  lastUserText: string;
  /** Names of the tools offered; empty when the request had no tools key. */
  toolNames: string[];
  /** Tool results carried by the request, in order, however the wire carries them. */
  toolResults: { callId?: string; name?: string; content: string; isError?: boolean }[];
  /** Date.now() when the request arrived / when the response finished or the client went away. */
  receivedAt: number;
  finishedAt?: number;
  /** True when the client closed the connection before the response was complete. */
  aborted: boolean;
  /** The TCP connection it came on: numbered from 0 in accept order, and when it was accepted. */
  connection: { id: number; openedAt: number };
  /** Why the server refused the request as malformed (undefined when it was accepted). */
  rejection?: string;
  /** Answered 429 by the fake's rate limit (`startFakeLlm({ rateLimit })`), before any script. */
  throttled?: boolean;
  /** With the prompt cache on: what the request read, wrote and sent uncached (see cache.ts). */
  cache?: CacheUsage;
}

/** A request's prompt tokens as the cache splits them: uncached + read + written = the whole prompt. */
export interface CacheUsage {
  uncached: number;
  read: number;
  write: number;
}

export interface ScriptedToolCall {
  /** Defaults to a wire-appropriate id (toolu_…, call_…); Ollama sends none, nor Gemini unless the script gives one. */
  id?: string;
  name: string;
  /** An object normally; a string is sent raw (OpenAI) to simulate unparseable arguments. */
  arguments: Record<string, unknown> | string;
}

export type Fault =
  /** That status with the real service's error body and the given headers (e.g. retry-after). */
  | {
      kind: 'status';
      status: number;
      message?: string;
      headers?: Record<string, string>;
      /** Gemini: the wait its error details ask for (`RetryInfo.retryDelay`, e.g. "34.4s"). */
      retryDelay?: string;
    }
  /** Never answer; the request stays open until the client goes away. */
  | { kind: 'hang' }
  /** 200 with a body that is not JSON. */
  | { kind: 'invalid-json' }
  /** 200, headers and part of the body, then the connection is closed. */
  | { kind: 'truncate' }
  /** The socket is destroyed without a response. */
  | { kind: 'reset' }
  /** Streamed requests only: some events, then the wire's error event. */
  | { kind: 'mid-stream-error'; message?: string };

export interface ScriptedReply {
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /**
   * Rendered as each wire counts: `input` is Anthropic `input_tokens` (cache excluded) and OpenAI
   * `prompt_tokens` / Gemini `promptTokenCount` (cache included). Unscripted: input 10, output 5, no cache.
   * `reasoning` (OpenAI wire): of `output`, the reasoning tokens, inside `completion_tokens` as
   * OpenAI counts them, or beside them as xAI does when `reasoningBeside` is set.
   */
  usage?: {
    input?: number;
    output?: number;
    cacheRead?: number;
    cacheWrite?: number;
    cost?: number;
    reasoning?: number;
    reasoningBeside?: boolean;
  };
  /** Overrides the natural stop reason of the wire. */
  stopReason?: string;
  /** OpenAI / Responses: the model's refusal text (`message.refusal`, a `refusal` content part). */
  refusal?: string;
  /** Anthropic: a thinking block (with its signature) before the text. */
  thinking?: { text: string; signature: string };
  /** OpenAI-compatible (DeepSeek): `reasoning_content`. */
  reasoning?: string;
  /** Served model name (defaults to the requested one). */
  model?: string;
  /** Extra response headers of a 200 (e.g. OpenRouter's `x-openrouter-cache-status`). */
  headers?: Record<string, string>;
  /** Wait before the response starts. */
  delayMs?: number;
  /** Streamed responses: wait between events. */
  chunkDelayMs?: number;
  fault?: Fault;
}

export type Responder = (request: RecordedRequest) => ScriptedReply | Promise<ScriptedReply>;

export interface FakeLlm {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request received, in arrival order. */
  requests: RecordedRequest[];
  /** Requests refused as malformed. A passing provider test expects this to stay empty. */
  readonly rejections: RecordedRequest[];
  /** TCP connections accepted since the server started (not reset by `reset`). */
  readonly connections: number;
  /** Replies consumed in arrival order when no responder is set. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Route each request to a reply (takes precedence over the queue). */
  respond(responder: Responder): void;
  /** Forget requests, queue, responder and the prompt cache's entries. */
  reset(): void;
  /** Forget every prompt-cache entry (the cache is on only with `startFakeLlm({ cache })`). */
  clearCache(): void;
  /** Stops the server, closing every open connection. */
  close(): Promise<void>;
}
