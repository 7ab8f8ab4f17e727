import { isIP } from 'node:net';
import { withTimeout } from '../abort.js';
import { wholeCharsPrefix } from '../text.js';
import { requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { htmlToText } from './html-to-text.js';
import { addressRefusal, type CheckedTarget, checkUrl, type HostPolicy, NetGuardError } from './net-guard.js';
import { readBodyCapped } from './read-body.js';
import type { ToolContext, ToolOutput } from './types.js';

const URL_FETCH_MAX_CHARS = 10_000;
const URL_FETCH_TIMEOUT_MS = 15_000;
const MAX_REDIRECTS = 10;
/** Raw bytes read before conversion; enough for a large HTML page to yield 10 000 characters. */
const MAX_BODY_BYTES = 2 * 1024 * 1024;

export const urlFetchTool = defineTool(
  {
    name: 'url_fetch',
    description:
      'Fetch content from a URL using HTTP GET and return the response body as text (HTML is converted to text, at most 10000 characters).',
    parameters: objectSchema({ url: { type: 'string', description: 'The http or https URL to fetch.' } }, [
      'url',
    ]),
  },
  async (args, context) => fetchUrl(requiredString(args, 'url'), context),
);

/**
 * url_fetch's work: GET `raw` (following checked redirects) within `timeoutMs` in all — connect,
 * headers and body together, so a server that sends one byte a second is cut off at the limit.
 */
export async function fetchUrl(
  raw: string,
  context: ToolContext,
  timeoutMs = URL_FETCH_TIMEOUT_MS,
): Promise<string | ToolOutput> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`invalid url ${JSON.stringify(raw)}`);
  }
  const policy: HostPolicy = {
    allowedHosts: context.allowedHosts,
    allowLoopback: context.env.AXE_ALLOW_PRIVATE_HOSTS === '1',
  };
  const timed = withTimeout(context.signal, timeoutMs);
  try {
    return await fetchFollowingRedirects(url, policy, timed.signal);
  } catch (error) {
    if (error instanceof NetGuardError)
      throw new Error(`url_fetch refused ${shownUrl(url)}: ${error.message}`);
    if (timed.timedOut() && !context.signal.aborted)
      throw new Error(`url_fetch timed out after ${timeoutMs / 1000}s: ${shownUrl(url)}`);
    throw new Error(`url_fetch failed for ${shownUrl(url)}: ${(error as Error).message}`);
  } finally {
    timed.dispose();
  }
}

/** A URL as error messages show it: a query may carry a token, so it is left out. */
function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}${url.search === '' ? '' : '?…'}`;
}

async function fetchFollowingRedirects(start: URL, policy: HostPolicy, signal: AbortSignal) {
  let url = start;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const target = await checkUrl(url, policy, signal);
    const response = await getPinned(target, policy, signal);
    const location = response.headers.location;
    if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
      await response.body.dump({ limit: 128 * 1024, signal });
      url = new URL(location, url);
      continue;
    }
    const { data: body } = await readBodyCapped(response.body, MAX_BODY_BYTES, signal);
    const type = String(response.headers['content-type'] ?? '').toLowerCase();
    const text = truncate(bodyText(type, body));
    if (response.statusCode < 200 || response.statusCode >= 300) {
      return { content: `HTTP ${response.statusCode}: ${text}`, isError: true };
    }
    return text;
  }
  throw new Error(`too many redirects (more than ${MAX_REDIRECTS})`);
}

/** GET through a connector that dials the checked address only, whatever DNS says later. */
export async function getPinned(target: CheckedTarget, policy: HostPolicy, signal: AbortSignal) {
  const { Agent, buildConnector, request } = await import('undici');
  const connect = buildConnector({ timeout: URL_FETCH_TIMEOUT_MS });
  const host = target.url.hostname.replace(/^\[|\]$/g, '');
  const dispatcher = new Agent({
    connections: 1,
    connect: (options, callback) => {
      const refusal = addressRefusal(target.address, policy);
      if (refusal)
        return callback(new NetGuardError(`address ${target.address} is a ${refusal} address`), null);
      connect({ ...options, hostname: target.address, servername: isIP(host) ? undefined : host }, callback);
    },
  });
  try {
    const response = await request(target.url, {
      method: 'GET',
      dispatcher,
      signal,
      headers: { 'user-agent': 'axe-url-fetch', accept: 'text/html,text/plain,application/json,*/*;q=0.5' },
    });
    response.body.once('close', () => void dispatcher.close().catch(() => {}));
    return response;
  } catch (error) {
    void dispatcher.destroy().catch(() => {});
    throw error;
  }
}

function bodyText(contentType: string, body: Buffer): string {
  if (contentType.includes('html')) return htmlToText(body.toString('utf8'));
  const textual = contentType === '' || /^text\/|json|xml|javascript|ecmascript|yaml|csv/.test(contentType);
  if (!textual || body.subarray(0, 8000).includes(0)) {
    return `[binary content: ${contentType || 'unknown type'}, ${body.length} bytes]`;
  }
  return body.toString('utf8');
}

function truncate(text: string): string {
  if (text.length <= URL_FETCH_MAX_CHARS) return text;
  return `${wholeCharsPrefix(text, URL_FETCH_MAX_CHARS)}\n... [response truncated, exceeded ${URL_FETCH_MAX_CHARS} characters]`;
}
