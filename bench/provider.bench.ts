// The provider layer's own cost per turn, and how fast a streamed byte becomes an event.
//
//  1. translate + parse alone (toWire → JSON text → fromWire), no network;
//  2. a whole non-streamed turn through `provider.chat` against the fake server at zero latency,
//     compared with a bare `fetch` POST of the same bytes whose body is only read as text, with a
//     bare `node:http` request (keep-alive agent; the difference is our cost), and with the same
//     bytes through axe's own HTTP client (`HttpPool.post`, the body read as text);
//     Bedrock, whose requests are signed per call, is left out;
//  3. the time from the server writing the first streamed text byte to our first text event.
import http, { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import { readText } from '../internal/provider/http.js';
import { createHttpPool, createProvider, WIRES } from '../internal/provider/index.js';
import type { ChatRequest, ProviderSettings, RetryPolicy, WireApi } from '../internal/provider/types.js';
import { startFakeLlm } from '../test/fake-llm/server.js';
import { listen, shut } from '../test/provider/local-server.js';
import { STREAM_END, STREAM_START, sseFrame } from './anthropic-stream.js';

const NO_RETRY: RetryPolicy = { maxRetries: 0, backoff: 'fixed', initialDelayMs: 1, maxDelayMs: 1 };
const TURNS = 400;

const request: ChatRequest = {
  model: 'bench-model',
  system: 'You are a careful assistant. '.repeat(40),
  messages: [
    { role: 'user', content: 'Compare the weather in Paris and Tokyo. '.repeat(20) },
    {
      role: 'assistant',
      content: 'Checking.',
      toolCalls: [
        { id: 'c1', name: 'get_weather', arguments: { city: 'Paris', days: 3 } },
        { id: 'c2', name: 'get_weather', arguments: { city: 'Tokyo', days: 3 } },
      ],
    },
    {
      role: 'tool',
      results: [
        { callId: 'c1', name: 'get_weather', content: 'Sunny, 21°C. '.repeat(50), isError: false },
        { callId: 'c2', name: 'get_weather', content: 'Rain, 14°C. '.repeat(50), isError: false },
      ],
    },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Weather forecast',
      parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } },
    },
  ],
  stream: false,
};
const replyText = 'Paris is sunny and warmer than Tokyo, where it rains. '.repeat(20);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

const fmt = (ms: number) => `${(ms * 1000).toFixed(0).padStart(6)} µs`;

async function main(): Promise<void> {
  const fake = await startFakeLlm({
    respond: () => ({ text: replyText, usage: { input: 900, output: 120 } }),
  });
  const pool = createHttpPool();
  const lines: string[] = [];
  lines.push(
    '| wire | translate+parse | chat() per turn | bare fetch | bare node:http request | axe HTTP client request | layer overhead |',
  );
  lines.push('|---|---|---|---|---|---|---|');
  for (const api of Object.keys(WIRES) as WireApi[]) {
    const wire = WIRES[api];
    if (wire.sign) continue;
    const settings: ProviderSettings = {
      name: api,
      api,
      baseUrl: api === 'openai' || api === 'responses' ? `${fake.url}/v1` : fake.url,
      apiKey: 'bench-key',
      apiKeyEnv: 'BENCH_KEY',
      apiKeyRequired: true,
      headers: {},
    };
    const provider = createProvider(settings, { retry: NO_RETRY, pool });
    const signal = new AbortController().signal;

    // A recorded response of this wire, to time translate + parse without the network.
    const url = wire.url(settings.baseUrl, request);
    const headers = { 'content-type': 'application/json', ...wire.authHeaders('bench-key') };
    const body = JSON.stringify(wire.toWire(request));
    const recorded = await (await fetch(url, { method: 'POST', headers, body })).text();
    const pure: number[] = [];
    for (let i = 0; i < TURNS * 5; i++) {
      const t = performance.now();
      JSON.stringify(wire.toWire(request));
      wire.fromWire(JSON.parse(recorded));
      pure.push(performance.now() - t);
    }

    const agent = new http.Agent({ keepAlive: true });
    const bareRequest = () =>
      new Promise<string>((resolve, reject) => {
        const sent = http.request(url, { method: 'POST', headers, agent }, (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => {
            text += chunk;
          });
          response.on('end', () => resolve(text)).on('error', reject);
        });
        sent.on('error', reject).end(body);
      });
    const payload = Buffer.from(body);
    const clientRequest = async () =>
      readText(
        (await pool.post(url, { ...headers, 'content-length': payload.byteLength }, payload, signal)).body,
      );
    const ours: number[] = [];
    const bareFetch: number[] = [];
    const bare: number[] = [];
    const client: number[] = [];
    for (let i = 0; i < 50; i++) {
      await provider.chat(request, { signal });
      await (await fetch(url, { method: 'POST', headers, body })).text();
      await bareRequest();
      await clientRequest();
    }
    // Interleaved so all four see the same machine state.
    for (let i = 0; i < TURNS; i++) {
      let t = performance.now();
      await provider.chat(request, { signal });
      ours.push(performance.now() - t);
      t = performance.now();
      await (await fetch(url, { method: 'POST', headers, body })).text();
      bareFetch.push(performance.now() - t);
      t = performance.now();
      await bareRequest();
      bare.push(performance.now() - t);
      t = performance.now();
      await clientRequest();
      client.push(performance.now() - t);
    }
    agent.destroy();
    const [p, o, f, b, c] = [median(pure), median(ours), median(bareFetch), median(bare), median(client)];
    // Median of the per-turn differences: steadier than the difference of two medians.
    const overhead = median(ours.map((t, i) => t - (bare[i] ?? t)));
    lines.push(`| ${api} | ${fmt(p)} | ${fmt(o)} | ${fmt(f)} | ${fmt(b)} | ${fmt(c)} | ${fmt(overhead)} |`);
  }
  await fake.close();
  process.stdout.write(
    `${lines.join('\n')}\n(medians of ${TURNS} turns; request ≈ ${JSON.stringify(request).length} B)\n\n`,
  );

  // First streamed byte → first event. The server flushes the first text delta, notes the time,
  // then holds the rest of the stream so nothing else can arrive first.
  let firstByteAt = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        STREAM_START +
          sseFrame('content_block_delta', {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'text_delta', text: 'Hi' },
          }),
      );
      firstByteAt = performance.now();
      setTimeout(() => {
        res.end(STREAM_END);
      }, 5);
    });
  });
  const base = await listen(server);
  const streaming = createProvider(
    {
      name: 'anthropic',
      api: 'anthropic',
      baseUrl: base,
      apiKey: 'k',
      apiKeyEnv: 'K',
      apiKeyRequired: true,
      headers: {},
    },
    { retry: NO_RETRY, pool },
  );
  const latencies: number[] = [];
  for (let i = 0; i < 200; i++) {
    let firstEventAt = 0;
    await streaming.chat(
      { ...request, stream: true },
      {
        signal: new AbortController().signal,
        onEvent: (e) => {
          if (e.type === 'text.delta' && firstEventAt === 0) firstEventAt = performance.now();
        },
      },
    );
    if (i >= 20) latencies.push(firstEventAt - firstByteAt);
  }
  await shut(server);
  await pool.close();
  const sorted = [...latencies].sort((a, b) => a - b);
  const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? Number.NaN;
  process.stdout.write(
    `first streamed byte → first text event: median ${fmt(median(latencies))}, p95 ${fmt(p95)} (${latencies.length} streams)\n`,
  );
}

await main();
