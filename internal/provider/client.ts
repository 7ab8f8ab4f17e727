import { abortsBy, sleep, withTimeout } from '../abort.js';
import { ConfigError, MissingKeyError } from '../errors.js';
import type { HttpResponse } from '../http/connection.js';
import type { HttpPool } from '../http/pool.js';
import type { RateGate } from '../ratelimit/gate.js';
import { redactUrl } from '../redact.js';
import { addSecret, maskSecrets } from '../secrets.js';
import { oneLine } from '../text.js';
import { abortError, afterRetries, type CallContext, failureError, httpError } from './classify.js';
import { boundedChunks, postJson, readText } from './http.js';
import { isObject, parseJson } from './json.js';
import { ListenerError, ResponseBuilder, type WireResponse } from './response-builder.js';
import { nextRetryDelay, retryAfterMs } from './retry.js';
import { createStreamReader } from './stream.js';
import type {
  ChatOptions,
  ChatRequest,
  ChatResponse,
  JsonValue,
  Provider,
  ProviderSettings,
  RetryPolicy,
} from './types.js';
import type { Wire } from './wire.js';

/**
 * Stop reasons that mean the model declined or a safety system blocked the answer, on every wire:
 * Anthropic `refusal`; Gemini's finish and block reasons; OpenAI-compatible and Responses
 * `content_filter`; Bedrock's `content_filtered` and `guardrail_intervened`.
 */
const REFUSAL_STOPS = new Set([
  'refusal',
  'SAFETY',
  'PROHIBITED_CONTENT',
  'RECITATION',
  'BLOCKLIST',
  'SPII',
  'IMAGE_SAFETY',
  'content_filter',
  'content_filtered',
  'guardrail_intervened',
]);

/** Error bodies are short; a larger one is cut here (only its message is wanted). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;
const REQUEST_ID_HEADERS = ['request-id', 'x-request-id', 'x-goog-request-id', 'x-amzn-requestid'];

/**
 * A provider: one wire's pure translation plus the shared send / decode / classify / retry path.
 * The API key is checked when `chat` is called, not at construction, so a run that never calls
 * the provider (`--replay`, `--dry-run`) needs no key.
 */
export function createWireProvider(settings: ProviderSettings, wire: Wire, options: SendOptions): Provider {
  addSecret(settings.apiKey);
  for (const value of Object.values(settings.headers)) addSecret(value);
  const shared = sharedParts(settings, wire);
  return {
    name: settings.name,
    chat: (request, chatOptions) => chat(settings, wire, options, shared, request, chatOptions),
  };
}

/** How a provider's calls are sent: its retry policy, the run's pool, and its rate gate. */
export interface SendOptions {
  retry: RetryPolicy;
  pool: HttpPool;
  /** The provider's gate, shared with every run handed the same RateGates (internal/ratelimit/). */
  gate?: RateGate;
}

/** What every call of one provider sends alike, made once (a fan-out's children share a provider). */
interface SharedParts {
  /** Only shown in messages: credentials in the URL's user info or query are masked. */
  shownBaseUrl: string;
  /** Where the key came from, as an error names it (`CallContext.apiKeyPlace`). */
  apiKeyPlace: string;
  /**
   * The headers before signing (a JSON body's), for a streamed request and for a whole one; made
   * at the first call (the key is checked first).
   */
  headers(stream: boolean): Readonly<Record<string, string>>;
  /** Whether the base URL passed `checkBaseUrl` once (it is the same for every call). */
  baseUrlChecked: boolean;
}

function sharedParts(settings: ProviderSettings, wire: Wire): SharedParts {
  const made = new Map<boolean, Record<string, string>>();
  return {
    shownBaseUrl: redactUrl(settings.baseUrl),
    apiKeyPlace:
      settings.apiKeySource === 'config'
        ? `providers.${settings.name}.api_key in config.toml`
        : settings.apiKeyEnv,
    headers(stream) {
      let headers = made.get(stream);
      if (!headers) {
        headers = {
          'content-type': 'application/json',
          accept: stream ? 'text/event-stream' : 'application/json',
          ...settings.headers,
          ...wire.authHeaders(settings.apiKey),
        };
        if (wire.streamFormat === 'ndjson') headers.accept = 'application/x-ndjson, application/json';
        if (wire.streamFormat === 'none') headers.accept = 'application/json';
        // Frozen: the HTTP layer makes their request head once (`postHead`).
        Object.freeze(headers);
        made.set(stream, headers);
      }
      return headers;
    },
    baseUrlChecked: false,
  };
}

/** A key the provider requires is not set: a call fails before anything is sent. */
export function keyMissing(settings: ProviderSettings): boolean {
  return settings.apiKeyRequired && (settings.apiKey === undefined || settings.apiKey === '');
}

async function chat(
  settings: ProviderSettings,
  wire: Wire,
  options: SendOptions,
  shared: SharedParts,
  request: ChatRequest,
  { signal: userSignal, onEvent, onAnswerBegins, deadline, connections }: ChatOptions,
): Promise<ChatResponse> {
  if (keyMissing(settings)) {
    throw new MissingKeyError(
      `API key for provider "${settings.name}" is not configured (set ${settings.apiKeyEnv} or add to config.toml)`,
    );
  }
  const context: CallContext = {
    provider: settings.name,
    api: settings.api,
    baseUrl: shared.shownBaseUrl,
    model: request.model,
    apiKeyPlace: shared.apiKeyPlace,
  };
  const url = wire.url(settings.baseUrl, request);
  const body = JSON.stringify(wire.toWire(request));
  const unsigned = shared.headers(request.stream === true);
  const headers = wire.sign ? { ...unsigned, ...(await wire.sign({ url, body }, settings)) } : unsigned;
  if (!shared.baseUrlChecked) {
    checkBaseUrl(settings);
    shared.baseUrlChecked = true;
  }
  // The runner's signal already aborts at the deadline it passes: no second timer per call.
  const timed =
    deadline === undefined || abortsBy(userSignal, deadline)
      ? undefined
      : withTimeout(userSignal, deadline - Date.now());
  try {
    const response = await attempts(wire, options, request, {
      context,
      url,
      headers,
      body,
      signal: timed?.signal ?? userSignal,
      userSignal,
      onEvent,
      onAnswerBegins,
      deadline,
      warmConnections: connections?.ahead,
    });
    const wanted = connections?.forCalls(response.toolCalls) ?? 0;
    if (wanted > 0) options.pool.warm(url, wanted);
    return response;
  } finally {
    timed?.dispose();
  }
}

interface Exchange {
  context: CallContext;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The caller's signal, or it combined with the deadline. */
  signal: AbortSignal;
  userSignal: AbortSignal;
  onEvent: ChatOptions['onEvent'];
  onAnswerBegins: ChatOptions['onAnswerBegins'];
  deadline: number | undefined;
  warmConnections: number | undefined;
}

/** Sends the request, retrying as the policy says, until an answer, a final error or the deadline. */
async function attempts(
  wire: Wire,
  { retry, pool, gate }: SendOptions,
  request: ChatRequest,
  {
    context,
    url,
    headers,
    body,
    signal,
    userSignal,
    onEvent,
    onAnswerBegins,
    deadline,
    warmConnections,
  }: Exchange,
): Promise<ChatResponse> {
  // What the gate counts against a tokens-per-minute limit: the prompt's and the answer's room.
  const tokens = gate ? Math.ceil(body.length / 4) + (request.maxTokens ?? 0) : 0;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) throw abortError(context, userSignal);
    const builder = new ResponseBuilder(request.model, onEvent);
    let requestId: string | undefined;
    let admitted = false;
    try {
      if (gate) {
        const wait = gate.admit(tokens, signal);
        if (wait) await wait;
        admitted = true;
      }
      const response = await postJson(pool, url, headers, body, signal, warmConnections);
      if (admitted) {
        admitted = false;
        gate?.done(response.status, response.headers);
      }
      if (response.status < 300) onAnswerBegins?.();
      requestId = pickRequestId(response.headers);
      const wireResponse = await readResponse(context, wire, request, response, builder, requestId);
      const out: ChatResponse = {
        ...wireResponse,
        model: wireResponse.model || request.model,
        retries: attempt,
      };
      if (requestId !== undefined) out.requestId = requestId;
      const cacheStatus = response.headers['x-openrouter-cache-status'];
      if (cacheStatus) out.cacheStatus = cacheStatus;
      if (out.refusal === undefined && REFUSAL_STOPS.has(out.stopReason)) out.refusal = out.stopReason;
      return out;
    } catch (caught) {
      if (admitted) gate?.cancel();
      if (caught instanceof ListenerError) throw caught.original;
      const error = failureError(context, caught, signal, userSignal, requestId);
      // A wait the body named (Gemini's `retryDelay`) holds every request of the provider too.
      const named = error.details.retryAfterMs;
      if (gate && named !== undefined && (error.category === 'rate_limit' || error.category === 'overloaded'))
        gate.pause(named);
      // Events already delivered cannot be taken back: a stream that failed midway is not retried.
      const delay = builder.delivered
        ? undefined
        : nextRetryDelay(error, retry, attempt + 1, Date.now(), deadline);
      if (delay === undefined) throw afterRetries(error, attempt);
      onEvent?.({ type: 'retry', attempt: attempt + 1, delayMs: delay, reason: error.message });
      try {
        await sleep(delay, signal);
      } catch {
        throw afterRetries(abortError(context, userSignal), attempt);
      }
    }
  }
}

async function readResponse(
  context: CallContext,
  wire: Wire,
  request: ChatRequest,
  response: HttpResponse,
  builder: ResponseBuilder,
  requestId: string | undefined,
): Promise<WireResponse> {
  if (response.status >= 300) {
    const text = await readText(response.body, MAX_ERROR_BODY_BYTES).catch(() => '');
    const info = wire.errorInfo(parseLenient(text));
    throw httpError(context, {
      status: response.status,
      headers: response.headers,
      providerMessage: info.message ?? plainText(text),
      providerType: info.type,
      requestId,
      retryAfterMs: retryAfterMs(response.headers, Date.now()) ?? info.retryAfterMs,
    });
  }
  if (!request.stream || wire.streamFormat === 'none') {
    const answer = wire.fromWire(parseJson(await readText(response.body), 'the response body'));
    return request.stream ? builder.replay(answer) : answer;
  }
  const reader = createStreamReader(wire, builder);
  for await (const chunk of boundedChunks(response.body)) reader.push(chunk);
  return reader.end();
}

/** A base URL that can never work is the user's setting to fix (exit 2), not a network error to retry. */
function checkBaseUrl({ name, baseUrl, baseUrlEnv }: ProviderSettings): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(baseUrl).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol === 'http:' || protocol === 'https:') return;
  const where = baseUrlEnv === undefined ? 'its base URL' : `${baseUrlEnv} or base_url in config.toml`;
  throw new ConfigError(
    `invalid base URL for provider "${name}": ${JSON.stringify(redactUrl(baseUrl))} is not an http:// or https:// URL (check ${where})`,
  );
}

/**
 * A non-JSON error body (a proxy's HTML page, plain text): its text, without tags, kept short;
 * masked before it is cut, so that no part of a key is left.
 */
function plainText(body: string): string | undefined {
  const text = oneLine(
    maskSecrets(body)
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ')
      .replace(/<[^>]*>/g, ' '),
  );
  if (text === '') return undefined;
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function parseLenient(text: string): JsonValue {
  try {
    const parsed = JSON.parse(text) as JsonValue;
    return isObject(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function pickRequestId(headers: Record<string, string>): string | undefined {
  for (const name of REQUEST_ID_HEADERS) {
    const value = headers[name];
    if (value !== undefined && value !== '') return value;
  }
  return undefined;
}
