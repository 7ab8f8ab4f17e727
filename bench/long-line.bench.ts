// One streamed line just under the 32 MiB body limit, on each streaming wire format (SSE and
// NDJSON), through `provider.chat` against a local server that writes it in 64 KiB pieces: the
// time from request to response and how much the process's peak memory grew over the body.
// Parsing must stay linear in the line's length (it once re-read the whole line at every piece).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { MAX_BODY_BYTES } from '../internal/provider/http.js';
import { createHttpPool, createProvider } from '../internal/provider/index.js';
import type { ChatRequest, RetryPolicy, WireApi } from '../internal/provider/types.js';
import { listen, shut } from '../test/provider/local-server.js';
import { STREAM_END, STREAM_START } from './anthropic-stream.js';

const NO_RETRY: RetryPolicy = { maxRetries: 0, backoff: 'fixed', initialDelayMs: 1, maxDelayMs: 1 };
const PIECE = 64 * 1024;
const request: ChatRequest = {
  model: 'bench-model',
  system: '',
  messages: [{ role: 'user', content: 'a long answer, please' }],
  stream: true,
};

/**
 * The whole body of a stream whose one text delta fills it up to 1 KiB under the limit, built in
 * place (no 32 MiB string on the way, which would raise the peak before the measure starts).
 */
function body(api: WireApi): Buffer {
  let head: string;
  let tail: string;
  if (api === 'ollama') {
    head = '{"message":{"role":"assistant","content":"';
    tail = `"},"done":false}\n${JSON.stringify({ message: { role: 'assistant', content: '' }, done: true, done_reason: 'stop', prompt_eval_count: 1, eval_count: 1 })}\n`;
  } else {
    head =
      STREAM_START +
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"';
    tail = `"}}\n\n${STREAM_END}`;
  }
  const bytes = Buffer.alloc(MAX_BODY_BYTES - 1024, 'x');
  bytes.write(head, 0);
  bytes.write(tail, bytes.length - Buffer.byteLength(tail));
  return bytes;
}

async function measure(api: WireApi, format: string): Promise<string> {
  const bytes = body(api);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', async () => {
      res.writeHead(200, { 'content-type': api === 'ollama' ? 'application/x-ndjson' : 'text/event-stream' });
      for (let at = 0; at < bytes.length; at += PIECE) {
        if (!res.write(bytes.subarray(at, at + PIECE)))
          await new Promise((resolve) => res.once('drain', resolve));
      }
      res.end();
    });
  });
  const base = await listen(server);
  const pool = createHttpPool();
  const provider = createProvider(
    { name: api, api, baseUrl: base, apiKey: 'k', apiKeyEnv: 'K', apiKeyRequired: true, headers: {} },
    { retry: NO_RETRY, pool },
  );
  global.gc?.();
  const start = process.memoryUsage();
  const before = start.rss / 1024;
  const heapBefore = start.heapUsed + start.external + start.arrayBuffers;
  let peakHeap = 0;
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    peakHeap = Math.max(peakHeap, m.heapUsed + m.external + m.arrayBuffers);
  }, 1);
  const t = performance.now();
  const response = await provider.chat(request, { signal: new AbortController().signal });
  const ms = performance.now() - t;
  const grew = (process.resourceUsage().maxRSS - before) / 1024;
  clearInterval(sampler);

  await pool.close();
  await shut(server);
  const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
  const heapGrew = (peakHeap - heapBefore) / (1024 * 1024);
  return `| ${format} (${api}) | ${mib(bytes.length)} MiB | ${mib(response.content.length)} MiB | ${ms.toFixed(0)} ms | ${grew.toFixed(0)} MB | ${heapGrew.toFixed(0)} MB |`;
}

// Each format in a process of its own, so that one's peak memory is not the other's baseline.
const [, script, only] = process.argv;
if (only === 'anthropic' || only === 'ollama') {
  process.stdout.write(`${await measure(only, only === 'ollama' ? 'NDJSON' : 'SSE')}\n`);
} else {
  const run = (api: string) =>
    execFileSync(process.execPath, [...process.execArgv, script as string, api], { encoding: 'utf8' }).trim();
  const rows = [
    '| format | body | answer | request → response | peak RSS growth | peak heap growth (sampled) |',
    '|---|---|---|---|---|---|',
  ];
  rows.push(run('anthropic'), run('ollama'));
  process.stdout.write(
    `${rows.join('\n')}\n(one line of the body's size in ${PIECE / 1024} KiB pieces; growth over the state before the request, server included; run with --expose-gc)\n`,
  );
}
