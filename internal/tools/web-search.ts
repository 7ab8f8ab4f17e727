import { withTimeout } from '../abort.js';
import { optionalInteger, requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { readBodyCapped } from './read-body.js';
import { asRecord } from './record.js';

const TAVILY_DEFAULT_BASE_URL = 'https://api.tavily.com';
const SEARCH_TIMEOUT_MS = 15_000;
/** Go axe's limits: 10 results, a 100 KB answer, 500 bytes of an error body. */
const DEFAULT_MAX_RESULTS = 10;
const MAX_RESULTS = 20;
const MAX_RESPONSE_BYTES = 100 * 1024;
const ERROR_BODY_MAX = 500;

export const webSearchTool = defineTool(
  {
    name: 'web_search',
    description: 'Search the web using Tavily and return text results including titles, URLs, and snippets.',
    parameters: objectSchema(
      {
        query: { type: 'string', description: 'The search query to perform.' },
        max_results: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_RESULTS,
          description: `How many results (default ${DEFAULT_MAX_RESULTS}).`,
        },
      },
      ['query'],
    ),
  },
  async (args, context) => {
    const query = requiredString(args, 'query');
    const maxResults = Math.min(optionalInteger(args, 'max_results', DEFAULT_MAX_RESULTS, 1), MAX_RESULTS);
    const key = context.env.TAVILY_API_KEY;
    if (!key) throw new Error('TAVILY_API_KEY environment variable is not set');
    const base =
      context.env.AXE_TAVILY_BASE_URL || context.env.AXE_WEB_SEARCH_BASE_URL || TAVILY_DEFAULT_BASE_URL;
    const timed = withTimeout(context.signal, SEARCH_TIMEOUT_MS);
    try {
      const { request } = await import('undici');
      let response: Awaited<ReturnType<typeof request>>;
      try {
        response = await request(`${base.replace(/\/+$/, '')}/search`, {
          method: 'POST',
          signal: timed.signal,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          body: JSON.stringify({ query, max_results: maxResults, search_depth: 'basic' }),
        });
      } catch (error) {
        throw new Error(`web_search failed: ${(error as Error).message}`);
      }
      let read: Awaited<ReturnType<typeof readBodyCapped>>;
      try {
        read = await readBodyCapped(response.body, MAX_RESPONSE_BYTES, timed.signal);
      } catch (error) {
        if (timed.timedOut() && !context.signal.aborted) {
          throw new Error(`web_search timed out after ${SEARCH_TIMEOUT_MS / 1000}s`);
        }
        throw new Error(`web_search failed: ${(error as Error).message}`);
      }
      const { data: body, overflow } = read;
      if (overflow) throw new Error('Tavily response too large to process');
      const text = body.toString('utf8');
      if (response.statusCode < 200 || response.statusCode >= 300) {
        const detail = body.subarray(0, ERROR_BODY_MAX).toString('utf8');
        throw new Error(`Tavily API error (HTTP ${response.statusCode}): ${detail}`);
      }
      return formatTavily(text);
    } finally {
      timed.dispose();
    }
  },
);

interface TavilyResult {
  title: string;
  url: string;
  content: string;
}

/** Pure: Tavily's JSON answer as Go axe shows it: `Title:` / `URL:` / `Snippet:` blocks. */
function formatTavily(json: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    throw new Error(`failed to parse Tavily response: ${(error as Error).message}`);
  }
  const body = asRecord(parsed);
  const results = Array.isArray(body.results) ? body.results.map(toResult) : [];
  if (results.length === 0) return 'No results found.';
  return results
    .map((r) => `Title: ${r.title}\nURL: ${r.url}\nSnippet: ${r.content}`)
    .join('\n\n')
    .trim();
}

function toResult(value: unknown): TavilyResult {
  const item = asRecord(value);
  const text = (key: string): string => {
    const field = item[key];
    return typeof field === 'string' ? field : '';
  };
  return { title: text('title'), url: text('url'), content: text('content') };
}
