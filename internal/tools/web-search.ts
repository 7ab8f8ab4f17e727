import { optionalInteger, requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';

export const TAVILY_DEFAULT_BASE_URL = 'https://api.tavily.com';
const SEARCH_TIMEOUT_MS = 15_000;

export const webSearchTool = defineTool(
  {
    name: 'web_search',
    description:
      'Search the web (Tavily) and return the top results: title, URL and a content snippet for each.',
    parameters: objectSchema(
      {
        query: { type: 'string', description: 'The search query.' },
        max_results: {
          type: 'integer',
          minimum: 1,
          maximum: 20,
          description: 'How many results (default 5).',
        },
      },
      ['query'],
    ),
  },
  async (args, context) => {
    const query = requiredString(args, 'query');
    const maxResults = Math.min(optionalInteger(args, 'max_results', 5, 1), 20);
    const key = context.env.TAVILY_API_KEY;
    if (!key) throw new Error('web_search needs an API key: set TAVILY_API_KEY');
    const base =
      context.env.AXE_TAVILY_BASE_URL || context.env.AXE_WEB_SEARCH_BASE_URL || TAVILY_DEFAULT_BASE_URL;
    const { request } = await import('undici');
    const signal = AbortSignal.any([context.signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]);
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${base.replace(/\/+$/, '')}/search`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, max_results: maxResults, search_depth: 'basic' }),
      });
    } catch (error) {
      throw new Error(`web_search failed: ${(error as Error).message}`);
    }
    const text = await response.body.text();
    if (response.statusCode !== 200) {
      throw new Error(`web_search: Tavily answered HTTP ${response.statusCode}: ${text.slice(0, 500)}`);
    }
    return formatTavily(text);
  },
);

interface TavilyResult {
  title: string;
  url: string;
  content: string;
}

/** Pure: Tavily's JSON answer as a numbered list the model can read. */
export function formatTavily(json: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new Error('web_search: Tavily answered with a body that is not JSON');
  }
  const body = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  const results = Array.isArray(body.results) ? body.results.map(toResult) : [];
  const lines: string[] = [];
  if (typeof body.answer === 'string' && body.answer !== '') lines.push(`Answer: ${body.answer}`, '');
  if (results.length === 0) lines.push('No results.');
  results.forEach((r, i) => {
    lines.push(`${i + 1}. ${r.title}`, `   ${r.url}`, `   ${r.content.replace(/\s+/g, ' ').trim()}`);
  });
  return lines.join('\n');
}

function toResult(value: unknown): TavilyResult {
  const item = typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  const text = (key: string) => (typeof item[key] === 'string' ? (item[key] as string) : '');
  return { title: text('title') || '(untitled)', url: text('url'), content: text('content') };
}
