import {
  CancelledError,
  ExitCode,
  errorMessage,
  ProviderError,
  type ProviderErrorCategory,
  type ProviderErrorDetails,
} from '../errors.js';
import { maskSecrets } from '../secrets.js';
import { oneLine } from '../text.js';
import { BodyTooLargeError } from './http.js';
import { WireError } from './json.js';
import type { ProviderApi } from './types.js';

/**
 * Every failure of a provider call becomes one `ProviderError` here: a one-line message with the
 * category, the HTTP status, the provider's own message, the request id and what to do.
 */
export interface CallContext {
  provider: string;
  api: ProviderApi;
  baseUrl: string;
  model: string;
  /** Where the key came from, as the user set it (`ANTHROPIC_API_KEY`, `providers.x.api_key in config.toml`). */
  apiKeyPlace: string;
}

function categoryForStatus(status: number): ProviderErrorCategory {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate_limit';
  if (status === 529) return 'overloaded';
  if (status === 408 || status >= 500) return 'server';
  return 'bad_request';
}

/**
 * The failure statuses each wire's Go axe provider counts as a bad request (exit 1); every other
 * one is a server error, or worse, there (exit 3): a 404 from Anthropic or Bedrock (an unknown
 * model), a 413 or a 422 from any.
 */
const GO_BAD_REQUEST: Readonly<Record<ProviderApi, ReadonlySet<number>>> = {
  anthropic: new Set([400]),
  bedrock: new Set([400]),
  openai: new Set([400, 404]),
  responses: new Set([400, 404]),
  opencode: new Set([400, 404]),
  google: new Set([400, 404]),
  ollama: new Set([400, 404]),
};

/** Error types carried in bodies and stream error events (Anthropic, OpenAI, Gemini status names). */
const CATEGORY_BY_TYPE = new Map<string, ProviderErrorCategory>([
  ['overloaded_error', 'overloaded'],
  ['rate_limit_error', 'rate_limit'],
  ['rate_limit_exceeded', 'rate_limit'],
  ['RESOURCE_EXHAUSTED', 'rate_limit'],
  ['authentication_error', 'auth'],
  ['permission_error', 'auth'],
  ['UNAUTHENTICATED', 'auth'],
  ['PERMISSION_DENIED', 'auth'],
  ['invalid_request_error', 'bad_request'],
  ['INVALID_ARGUMENT', 'bad_request'],
  ['api_error', 'server'],
  ['server_error', 'server'],
  ['INTERNAL', 'server'],
  ['UNAVAILABLE', 'server'],
]);

const LABEL: Record<ProviderErrorCategory, string> = {
  auth: 'authentication failed',
  rate_limit: 'rate limited',
  overloaded: 'overloaded',
  bad_request: 'request rejected',
  server: 'server error',
  timeout: 'timed out',
  cancelled: 'cancelled',
};

function hint(details: Omit<ProviderErrorDetails, 'provider'>, context: CallContext): string {
  const { category, status } = details;
  const key = context.apiKeyPlace === '' ? 'the API key' : `the API key in ${context.apiKeyPlace}`;
  // The server's retry-after, when it sent one, says when retrying makes sense.
  const when = details.retryAfterMs === undefined ? 'later' : `in ${formatWait(details.retryAfterMs)}`;
  switch (category) {
    case 'auth':
      return status === 403 ? `check that ${key} may use model "${context.model}"` : `check ${key}`;
    case 'rate_limit':
      return `lower the request rate or retry ${when} (retries are set by [retry] max_retries)`;
    case 'overloaded':
      return `the provider is overloaded: retry ${when}`;
    case 'bad_request':
      if (status === 404)
        return `check the model name "${context.model}" and the base URL ${context.baseUrl}`;
      if (status === 413) return 'the request is too large: shorten the input, context files or tool output';
      return `check the model "${context.model}" and the request parameters`;
    case 'server':
      return `a failure on the provider side: retry ${when}`;
    case 'timeout':
      return "the run's deadline passed before the provider answered: raise --timeout or the agent's timeout";
    case 'cancelled':
      return 'the run was cancelled';
  }
}

/** A server-requested wait as a person reads it: `250 ms`, `30 s`. */
function formatWait(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.ceil(ms / 1000)} s`;
}

function build(
  context: CallContext,
  details: Omit<ProviderErrorDetails, 'provider'>,
  what: string,
  cause?: unknown,
  todo = hint(details, context),
): ProviderError {
  const status = details.status === undefined ? '' : ` (HTTP ${details.status})`;
  const request = details.requestId === undefined ? '' : ` [request ${details.requestId}]`;
  const then = todo === '' ? '' : `; ${todo}`;
  // A server may echo the request's key or headers back in its error: never passed on (masked
  // before the text is made one line: a key with a line break is found as it came).
  const message = maskSecrets(
    `${context.provider}: ${LABEL[details.category]}${status}: ${oneLine(maskSecrets(what))}${request}${then}`,
  );
  const masked = { ...details, provider: context.provider };
  if (details.providerMessage !== undefined) masked.providerMessage = maskSecrets(details.providerMessage);
  return new ProviderError(message, masked, { cause });
}

export interface HttpFailure {
  status: number;
  headers: Record<string, string>;
  providerMessage: string | undefined;
  providerType: string | undefined;
  requestId: string | undefined;
  retryAfterMs: number | undefined;
}

export function httpError(context: CallContext, failure: HttpFailure): ProviderError {
  const { status, providerMessage } = failure;
  const byType = failure.providerType === undefined ? undefined : CATEGORY_BY_TYPE.get(failure.providerType);
  const category = byType === 'overloaded' ? 'overloaded' : categoryForStatus(status);
  const details: Omit<ProviderErrorDetails, 'provider'> = { category, status };
  if (category === 'bad_request' && !GO_BAD_REQUEST[context.api].has(status))
    details.exitCode = ExitCode.provider;
  if (providerMessage !== undefined) details.providerMessage = providerMessage;
  if (failure.requestId !== undefined) details.requestId = failure.requestId;
  if (failure.retryAfterMs !== undefined) details.retryAfterMs = failure.retryAfterMs;
  const shouldRetry = failure.headers['x-should-retry'];
  if (shouldRetry === 'true' || shouldRetry === 'false') details.shouldRetry = shouldRetry === 'true';
  if (context.api === 'ollama' && status === 400 && /does not support tools/i.test(providerMessage ?? '')) {
    const todo = 'use a model with tool support, or give the agent no tools or sub-agents';
    return build(context, details, `model "${context.model}" does not support tools`, undefined, todo);
  }
  if (status >= 300 && status < 400) {
    const location = failure.headers.location ?? 'an unknown location';
    return build(
      context,
      details,
      `redirect to ${location} not followed: set the base URL to the final address`,
    );
  }
  return build(context, details, providerMessage ?? 'no error message in the response');
}

/** A failure after the request was sent: network errors, malformed bodies, stream error events. */
export function failureError(
  context: CallContext,
  error: unknown,
  signal: AbortSignal,
  userSignal: AbortSignal,
  requestId: string | undefined,
): ProviderError {
  if (error instanceof ProviderError) return error;
  if (signal.aborted) return abortError(context, userSignal);
  const withId = requestId === undefined ? {} : { requestId };
  if (error instanceof WireError) {
    const category =
      (error.providerType === undefined ? undefined : CATEGORY_BY_TYPE.get(error.providerType)) ??
      (error.providerStatus === undefined ? 'server' : categoryForStatus(error.providerStatus));
    return build(context, { category, providerMessage: error.message, ...withId }, error.message, error);
  }
  if (error instanceof BodyTooLargeError) {
    // Our own cap, not the provider's complaint: retrying would only fetch it again.
    const todo = `no model answer is that large: check the base URL ${context.baseUrl}`;
    return build(context, { category: 'server', shouldRetry: false, ...withId }, error.message, error, todo);
  }
  const network = networkFailure(context, error);
  return build(context, { category: 'server', ...withId }, network.what, error, network.todo);
}

/** The error that ends a call after `retries` retries: it says they were made. */
export function afterRetries(error: ProviderError, retries: number): ProviderError {
  if (retries === 0) return error;
  const count = retries === 1 ? '1 retry' : `${retries} retries`;
  return new ProviderError(
    `${error.message} (after ${count})`,
    { ...error.details, retries },
    { cause: error.cause },
  );
}

export function abortError(context: CallContext, userSignal: AbortSignal): ProviderError {
  if (userSignal.aborted && userSignal.reason instanceof CancelledError) {
    return build(context, { category: 'cancelled' }, 'request aborted', userSignal.reason);
  }
  // The runner aborts at its deadline with a reason that says which one (`timeout after 30s`).
  const reason = userSignal.aborted && userSignal.reason instanceof Error ? userSignal.reason.message : '';
  return build(
    context,
    { category: 'timeout' },
    `request aborted at the deadline${reason ? ` (${reason})` : ''}`,
  );
}

function errorCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string' && code !== 'UND_ERR_SOCKET') return code;
    if (current instanceof AggregateError && current.errors[0] instanceof Error) current = current.errors[0];
    else current = current.cause;
  }
  return error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
}

/** What went wrong on the network, and what to do when it is not "retry later" (empty: the text says it). */
function networkFailure(context: CallContext, error: unknown): { what: string; todo?: string } {
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') {
    if (context.api === 'ollama') {
      return { what: `connection refused: is Ollama running? (expected at ${context.baseUrl})`, todo: '' };
    }
    return {
      what: `connection refused at ${context.baseUrl}`,
      todo: 'check that the server is running and the base URL is right',
    };
  }
  if (code === 'ENOTFOUND')
    return { what: `cannot resolve the host of ${context.baseUrl}`, todo: 'check the base URL' };
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE') {
    return { what: 'the connection was closed before the response was complete' };
  }
  const reason = errorMessage(error);
  return { what: `network error${code === undefined ? '' : ` ${code}`}: ${reason}` };
}
