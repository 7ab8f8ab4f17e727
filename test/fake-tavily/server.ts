import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Tavily search API on 127.0.0.1: POST /search with `Authorization: Bearer <key>` and a
 * JSON body `{ query, max_results }`, answered like the real service (401 with `detail.error` for
 * a wrong key, 400 for a missing query).
 */
export interface FakeTavilyRequest {
  path: string;
  authorization: string | undefined;
  body: unknown;
}

export interface FakeTavily {
  url: string;
  requests: FakeTavilyRequest[];
  close(): Promise<void>;
}

export async function startFakeTavily(validKey: string): Promise<FakeTavily> {
  const requests: FakeTavilyRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(payload));
      };
      if (req.method !== 'POST' || req.url !== '/search')
        return send(404, { detail: { error: 'Not Found' } });
      if (req.headers.authorization !== `Bearer ${validKey}`) {
        return send(401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
      }
      const query = (body as { query?: unknown } | undefined)?.query;
      if (typeof query !== 'string' || query === '')
        return send(400, { detail: { error: 'Query is missing.' } });
      const max = Number((body as { max_results?: unknown }).max_results ?? 5);
      const results = [1, 2, 3, 4, 5, 6].slice(0, max).map((n) => ({
        title: `Result ${n} for ${query}`,
        url: `https://example.com/${n}`,
        content: `Snippet ${n}\n  about ${query}.`,
        score: 1 - n / 10,
      }));
      send(200, { query, answer: null, results, response_time: 0.1 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
