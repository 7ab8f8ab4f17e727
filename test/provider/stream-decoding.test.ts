import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter, NdjsonDecoder, SseDecoder } from '../../internal/provider/decoders.js';
import { WIRES } from '../../internal/provider/index.js';
import { WireError } from '../../internal/provider/json.js';
import type { JsonValue, WireApi } from '../../internal/provider/types.js';
import { cut, decodeChunks, fixture } from './helpers.js';

const enc = new TextEncoder();

const RECORDED: { api: WireApi; file: string }[] = [
  { api: 'anthropic', file: 'anthropic-tools.sse' },
  { api: 'openai', file: 'openai-tools.sse' },
  { api: 'ollama', file: 'ollama-tools.ndjson' },
  { api: 'google', file: 'google-tools.sse' },
  { api: 'responses', file: 'responses-tools.sse' },
];

describe('recorded streams decode to the expected response', () => {
  it('anthropic: text, two tool calls with typed arguments, usage with cache tokens', () => {
    const { response, events } = decodeChunks('anthropic', [fixture('anthropic-tools.sse')]);
    expect(response).toEqual({
      content: 'Je vais vérifier les deux villes ✓ 東京',
      toolCalls: [
        {
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          name: 'get_weather',
          arguments: { city: 'Paris', days: 3, metric: true },
        },
        {
          id: 'toolu_01AbCdEfGhIjKlMnOpQrStUv',
          name: 'get_weather',
          arguments: { city: '東京', days: 1, units: { temp: 'C' } },
        },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 472, outputTokens: 89, cacheReadTokens: 3000, cacheWriteTokens: 1200 },
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(events.map((e) => e.type)).toEqual([
      'text.delta',
      'text.delta',
      'toolcall.start',
      'toolcall.delta',
      'toolcall.delta',
      'toolcall.end',
      'toolcall.start',
      'toolcall.delta',
      'toolcall.end',
      'usage',
      'done',
    ]);
  });

  it('openai: comments ignored, tool calls assembled by index, usage chunk and cost', () => {
    const { response } = decodeChunks('openai', [fixture('openai-tools.sse')]);
    expect(response).toEqual({
      content: 'Checking both — Zürich and 東京 🌦',
      toolCalls: [
        { id: 'call_abc123', name: 'get_weather', arguments: { city: 'Zürich', days: 2 } },
        { id: 'call_def456', name: 'get_time', arguments: { zone: 'Asia/Tokyo', h24: true } },
      ],
      stopReason: 'tool_calls',
      usage: { inputTokens: 300, outputTokens: 64, cacheReadTokens: 512, cacheWriteTokens: 0 },
      model: 'gpt-4.1-2025-04-14',
      cost: 0.00123,
    });
  });

  it('ollama: NDJSON deltas, whole tool calls with synthesised ids, counts from the done line', () => {
    const { response } = decodeChunks('ollama', [fixture('ollama-tools.ndjson')]);
    expect(response).toEqual({
      content: 'Ich prüfe das Wetter ☀ in Köln.',
      toolCalls: [
        { id: 'ollama_0', name: 'get_weather', arguments: { city: 'Köln', days: 3 } },
        { id: 'ollama_1', name: 'get_time', arguments: { zone: 'Europe/Berlin', h24: true, extra: null } },
      ],
      stopReason: 'stop',
      usage: { inputTokens: 301, outputTokens: 45, cacheReadTokens: 0, cacheWriteTokens: 0 },
      model: 'qwen3:8b',
    });
  });

  it('google: text parts, function calls with their thought signature, cumulative usage', () => {
    const { response } = decodeChunks('google', [fixture('google-tools.sse')]);
    expect(response).toEqual({
      content: 'Voy a consultar el tiempo en Málaga 🌤',
      toolCalls: [
        {
          id: 'gemini_0',
          name: 'get_weather',
          arguments: { city: 'Málaga', days: 2 },
          signature: 'CiQBVKhc7pQ0X',
        },
        { id: 'gemini_1', name: 'get_time', arguments: { zone: 'Europe/Madrid' } },
      ],
      stopReason: 'STOP',
      usage: {
        inputTokens: 100,
        outputTokens: 61,
        cacheReadTokens: 20,
        cacheWriteTokens: 0,
        reasoningTokens: 30,
      },
      model: 'gemini-2.5-flash',
    });
  });
});

describe('recorded Responses API stream', () => {
  it('responses: named events, reasoning item skipped, calls by output_index with their call_id, usage from response.completed', () => {
    const { response, events } = decodeChunks('responses', [fixture('responses-tools.sse')]);
    expect(response).toEqual({
      content: 'Je regarde Zürich et 東京 ☂',
      toolCalls: [
        { id: 'call_Zq8bAXg1', name: 'get_weather', arguments: { city: 'Zürich', days: 2 } },
        { id: 'call_Tk3mPq9w', name: 'get_time', arguments: { zone: 'Asia/Tokyo', h24: true } },
      ],
      stopReason: 'completed',
      usage: {
        inputTokens: 300,
        outputTokens: 97,
        cacheReadTokens: 512,
        cacheWriteTokens: 0,
        reasoningTokens: 64,
      },
      model: 'gpt-5-mini-2025-08-07',
    });
    expect(
      events.filter((e) => e.type === 'toolcall.start').map((e) => e.type === 'toolcall.start' && e.index),
    ).toEqual([2, 3]);
  });
});

describe('chunking and line endings never change the result', () => {
  for (const { api, file } of RECORDED) {
    it(`${file}: random chunk boundaries and \\n / \\r\\n / \\r line endings`, () => {
      const normalised = fixture(file).toString('utf8').replace(/\r\n/g, '\n');
      const expected = decodeChunks(api, [enc.encode(normalised)]);
      fc.assert(
        fc.property(
          fc.constantFrom('\n', '\r\n', '\r'),
          fc.array(fc.nat({ max: 4000 }), { maxLength: 60 }),
          (eol, offsets) => {
            const bytes = enc.encode(normalised.replace(/\n/g, eol));
            const actual = decodeChunks(
              api,
              cut(
                bytes,
                offsets.map((o) => o % bytes.length),
              ),
            );
            expect(actual).toEqual(expected);
          },
        ),
        { numRuns: 150 },
      );
    });

    it(`${file}: one byte at a time`, () => {
      const bytes = fixture(file);
      const oneByOne = [...bytes].map((b) => Uint8Array.of(b));
      expect(decodeChunks(api, oneByOne)).toEqual(decodeChunks(api, [bytes]));
    });
  }
});

describe('truncated streams are errors, not short answers', () => {
  for (const { api, file } of RECORDED) {
    it(`${file} cut before its closing event`, () => {
      const text = fixture(file).toString('utf8');
      // Keep the first half of the frames: the connection dropped mid-answer.
      const separator = api === 'ollama' ? '\n' : '\n\n';
      const frames = text
        .replace(/\r\n/g, '\n')
        .split(separator)
        .filter((f) => f.trim() !== '');
      const truncated = frames.slice(0, Math.ceil(frames.length / 2)).join(separator);
      expect(() => decodeChunks(api, [enc.encode(`${truncated}\n\n`)])).toThrow(WireError);
    });
  }
});

describe('SSE framing', () => {
  it('named events, multi-line data, comments, fields without a space, id and retry ignored', () => {
    const decoder = new SseDecoder();
    const out = [
      ...decoder.push(enc.encode(': comment\nevent: a\ndata: one\ndata:two\nid: 7\nretry: 100\n\n')),
      ...decoder.push(enc.encode('data: plain\n\nevent: empty\n\n')),
      ...decoder.end(),
    ];
    expect(out).toEqual([{ event: 'a', data: 'one\ntwo' }, { data: 'plain' }]);
  });

  it('a final event without its blank line is still delivered at the end', () => {
    const decoder = new SseDecoder();
    expect(decoder.push(enc.encode('data: last'))).toEqual([]);
    expect(decoder.end()).toEqual([{ data: 'last' }]);
  });

  it('a long line in many chunks is searched once, character by character: linear, not quadratic', () => {
    // 8 MiB in 64 KiB chunks: searching the whole unfinished line again at each chunk (as the
    // splitter once did) looks at 129 times as many characters as there are.
    const chunk = enc.encode(`data: ${'x'.repeat(64 * 1024 - 6)}`);
    const splitter = new LineSplitter();
    const lines: string[] = [];
    const onLine = (line: string) => lines.push(line);
    let sent = 0;
    for (let i = 0; i < 128; i++) {
      splitter.push(chunk, onLine);
      sent += chunk.length;
    }
    expect(lines).toEqual([]);
    splitter.push(enc.encode('\r'), onLine);
    splitter.push(enc.encode('\nnext'), onLine);
    splitter.end(onLine);
    expect(lines.map((line) => line.length)).toEqual([sent, 4]);
    expect(lines[0]?.startsWith('data: xxx')).toBe(true);
    expect(lines[1]).toBe('next');
    expect(splitter.scanned).toBeLessThanOrEqual(sent + '\r\nnext'.length);
  });

  it('NDJSON skips blank lines and keeps a final line without newline', () => {
    const decoder = new NdjsonDecoder();
    expect([
      ...decoder.push(enc.encode('{"a":1}\r\n\n{"b"')),
      ...decoder.push(enc.encode(':2}')),
      ...decoder.end(),
    ]).toEqual([{ data: '{"a":1}' }, { data: '{"b":2}' }]);
  });
});

describe('error events in streams', () => {
  it('anthropic error event carries the error type', () => {
    const body =
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
    expect(() => decodeChunks('anthropic', [enc.encode(body)])).toThrow(
      expect.objectContaining({ message: 'Overloaded', providerType: 'overloaded_error' }),
    );
  });

  it('openai / openrouter error chunk', () => {
    const body = 'data: {"error":{"message":"Provider returned error","code":502}}\n\n';
    expect(() => decodeChunks('openai', [enc.encode(body)])).toThrow(
      expect.objectContaining({ message: 'Provider returned error', providerStatus: 502 }),
    );
  });

  it('ollama error line', () => {
    expect(() => decodeChunks('ollama', [enc.encode('{"error":"model runner crashed"}\n')])).toThrow(
      'model runner crashed',
    );
  });

  it('openai-compatible servers that send each call whole at index 0 still give distinct calls', () => {
    const chunk = (toolCall: object) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [toolCall] }, finish_reason: null }] })}\n\n`;
    const body =
      chunk({ index: 0, id: 'a', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }) +
      chunk({ index: 0, id: 'b', type: 'function', function: { name: 'g', arguments: '{"y":2}' } }) +
      'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n';
    expect(decodeChunks('openai', [enc.encode(body)]).response.toolCalls).toEqual([
      { id: 'a', name: 'f', arguments: { x: 1 } },
      { id: 'b', name: 'g', arguments: { y: 2 } },
    ]);
  });

  it('ollama-compatible servers that send tool arguments as a string: parsed, or an argumentsError', () => {
    const line = (message: object, done = false) =>
      `${JSON.stringify({ model: 'm', message: { role: 'assistant', content: '', ...message }, done })}\n`;
    const body =
      line({ tool_calls: [{ function: { name: 'f', arguments: '{"x":1}' } }] }) +
      line({ tool_calls: [{ function: { name: 'g', arguments: '{"y":' } }] }) +
      line({}, true);
    const [good, bad] = decodeChunks('ollama', [enc.encode(body)]).response.toolCalls;
    expect(good).toEqual({ id: 'ollama_0', name: 'f', arguments: { x: 1 } });
    expect(bad).toMatchObject({ id: 'ollama_1', name: 'g', arguments: {} });
    expect(bad?.argumentsError).toMatch(/^tool arguments are not valid JSON .*: \{"y":$/);
  });

  it('anthropic-compatible servers that send the whole tool input in content_block_start', () => {
    const frame = (event: string, data: object) =>
      `event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`;
    const body =
      frame('message_start', {
        message: { model: 'MiniMax-M2', usage: { input_tokens: 5, output_tokens: 0 } },
      }) +
      frame('content_block_start', {
        index: 0,
        content_block: { type: 'tool_use', id: 't1', name: 'f', input: { q: 'x' } },
      }) +
      frame('content_block_stop', { index: 0 }) +
      frame('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 7 } }) +
      frame('message_stop', {});
    expect(decodeChunks('anthropic', [enc.encode(body)]).response.toolCalls).toEqual([
      { id: 't1', name: 'f', arguments: { q: 'x' } },
    ]);
  });
});

describe('lenient where real servers differ', () => {
  const enc2 = new TextEncoder();
  const sse = (...events: unknown[]) =>
    enc2.encode(events.map((e) => `data: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join(''));

  it("Mistral's array content: the text parts are the answer, thinking parts are not (JSON and stream)", () => {
    const body = {
      model: 'magistral-medium',
      choices: [
        {
          index: 0,
          finish_reason: 'stop',
          message: {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: [{ type: 'text', text: 'Two plus two…' }] },
              { type: 'text', text: '2 + 2 = 4' },
            ],
          },
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 40 },
    };
    expect(WIRES.openai.fromWire(body as unknown as JsonValue).content).toBe('2 + 2 = 4');
    const { response } = decodeChunks('openai', [
      sse(
        {
          model: 'm',
          choices: [
            {
              index: 0,
              delta: { content: [{ type: 'thinking', thinking: [{ type: 'text', text: 'hmm' }] }] },
            },
          ],
        },
        { model: 'm', choices: [{ index: 0, delta: { content: [{ type: 'text', text: '2 + 2' }] } }] },
        { model: 'm', choices: [{ index: 0, delta: { content: ' = 4' }, finish_reason: 'stop' }] },
        '[DONE]',
      ),
    ]);
    expect(response.content).toBe('2 + 2 = 4');
  });

  it('a tool call with an empty or missing id gets a unique one, so its answer can name it', () => {
    const call = (id?: string) => ({
      ...(id === undefined ? {} : { id }),
      type: 'function',
      function: { name: 'f', arguments: '{}' },
    });
    const body = {
      model: 'm',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: { role: 'assistant', content: null, tool_calls: [call(''), call()] },
        },
      ],
    };
    const ids = WIRES.openai.fromWire(body as unknown as JsonValue).toolCalls.map((c) => c.id);
    expect(ids.every((id) => /^call_axe_\d+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(2);
    const again = WIRES.openai.fromWire(body as unknown as JsonValue).toolCalls.map((c) => c.id);
    expect(again.some((id) => ids.includes(id))).toBe(false);
  });

  it('a tool call whose id and name come in later deltas than its first keeps them', () => {
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({
        id: 'chatcmpl-B7x',
        object: 'chat.completion.chunk',
        created: 1731000000,
        model: 'qwen3-coder',
        choices: [{ index: 0, delta, finish_reason: finish }],
      })}\n\n`;
    const body =
      chunk({ role: 'assistant', content: null }) +
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function' }] }) +
      chunk({ tool_calls: [{ index: 0, function: { name: 'read_file' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"path":' } }] }) +
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"a.ts"}' } }] }) +
      chunk({ tool_calls: [{ index: 1, type: 'function', function: { arguments: '' } }] }) +
      chunk({ tool_calls: [{ index: 1, id: 'call_2', function: { name: 'list_dir', arguments: '{}' } }] }) +
      chunk({}, 'tool_calls') +
      'data: {"id":"chatcmpl-B7x","object":"chat.completion.chunk","created":1731000000,"model":"qwen3-coder","choices":[],"usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29}}\n\n' +
      'data: [DONE]\n\n';
    expect(decodeChunks('openai', [enc.encode(body)]).response.toolCalls).toEqual([
      { id: 'call_1', name: 'read_file', arguments: { path: 'a.ts' } },
      { id: 'call_2', name: 'list_dir', arguments: {} },
    ]);
  });
});

describe('refusals are kept, not dropped', () => {
  it('Responses API: a refusal content part (JSON) and response.refusal.delta events (stream)', () => {
    const body = {
      object: 'response',
      status: 'completed',
      model: 'gpt-5',
      output: [
        { type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help.' }] },
      ],
      usage: { input_tokens: 5, output_tokens: 3 },
    };
    expect(WIRES.responses.fromWire(body as unknown as JsonValue)).toMatchObject({
      content: '',
      refusal: 'I cannot help.',
    });
    const events = [
      { type: 'response.refusal.delta', item_id: 'm', output_index: 0, content_index: 0, delta: 'I cannot ' },
      { type: 'response.refusal.delta', item_id: 'm', output_index: 0, content_index: 0, delta: 'help.' },
      { type: 'response.completed', response: { ...body, output: [] } },
    ];
    const bytes = new TextEncoder().encode(
      events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''),
    );
    expect(decodeChunks('responses', [bytes]).response).toMatchObject({
      content: '',
      refusal: 'I cannot help.',
    });
  });
});
