import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm } from './server.js';
import { at, parseSse, post } from './test-client.js';
import type { FakeLlm } from './types.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const HEADERS = { 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' };
const TOOL = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object', properties: {} },
};

/** A full conversation: text, two tool calls in one turn, their results (one an error), a follow-up. */
function conversation(): Record<string, unknown> {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    tools: [TOOL, { ...TOOL, name: 'list_dir' }],
    messages: [
      { role: 'user', content: 'Summarise a.txt' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.txt' } },
          { type: 'tool_use', id: 'toolu_2', name: 'list_dir', input: { path: '.' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'EACCES', is_error: true },
        ],
      },
    ],
  };
}

describe('anthropic wire', () => {
  it('accepts a multi-turn tool conversation and renders text, tool calls and usage as JSON', async () => {
    fake.enqueue({
      text: 'Here.',
      toolCalls: [{ name: 'read_file', arguments: { path: 'b.txt', lines: 3 } }],
      usage: { input: 100, output: 20, cacheRead: 80, cacheWrite: 5 },
    });
    const res = await post(`${fake.url}/v1/messages`, conversation(), HEADERS);
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(at(res.json, 'stop_reason')).toBe('tool_use');
    expect(at(res.json, 'content', 0)).toEqual({ type: 'text', text: 'Here.' });
    expect(at(res.json, 'content', 1, 'input')).toEqual({ path: 'b.txt', lines: 3 });
    expect(at(res.json, 'content', 1, 'id')).toMatch(/^toolu_/);
    expect(at(res.json, 'usage')).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      cache_read_input_tokens: 80,
      cache_creation_input_tokens: 5,
    });
    const [recorded] = fake.requests;
    expect(fake.rejections).toEqual([]);
    expect(recorded).toMatchObject({
      wire: 'anthropic',
      model: 'claude-sonnet-4-5',
      stream: false,
      system: 'You are terse.',
      lastUserText: 'Summarise a.txt',
      toolNames: ['read_file', 'list_dir'],
      toolResults: [
        { callId: 'toolu_1', content: 'hello', isError: false },
        { callId: 'toolu_2', content: 'EACCES', isError: true },
      ],
      aborted: false,
    });
    expect(recorded?.finishedAt).toBeGreaterThanOrEqual(recorded?.receivedAt ?? 0);
  });

  it('streams named SSE events with ping, text deltas and input_json deltas', async () => {
    fake.enqueue({
      text: 'Streaming text here',
      toolCalls: [{ id: 'toolu_x', name: 'list_dir', arguments: { path: '.' } }],
    });
    const res = await post(`${fake.url}/v1/messages`, { ...conversation(), stream: true }, HEADERS);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(res.text);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message_start');
    expect(names).toContain('ping');
    expect(names.at(-2)).toBe('message_delta');
    expect(names.at(-1)).toBe('message_stop');
    const data = events.map((e) => JSON.parse(e.data) as unknown);
    const textDeltas = data
      .filter((d) => at(d, 'delta', 'type') === 'text_delta')
      .map((d) => at(d, 'delta', 'text'));
    expect(textDeltas.length).toBeGreaterThan(1);
    expect(textDeltas.join('')).toBe('Streaming text here');
    const json = data
      .filter((d) => at(d, 'delta', 'type') === 'input_json_delta')
      .map((d) => at(d, 'delta', 'partial_json'));
    expect(JSON.parse(json.join(''))).toEqual({ path: '.' });
    const start = data.find((d) => at(d, 'content_block', 'type') === 'tool_use');
    expect(at(start, 'content_block', 'id')).toBe('toolu_x');
    expect(at(data.at(-2), 'delta', 'stop_reason')).toBe('tool_use');
    expect(fake.requests[0]?.stream).toBe(true);
  });

  it('ends a plain reply with end_turn', async () => {
    fake.enqueue({ text: 'ok' });
    const res = await post(
      `${fake.url}/v1/messages`,
      { model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      HEADERS,
    );
    expect(at(res.json, 'stop_reason')).toBe('end_turn');
  });

  const malformed: [
    string,
    (body: Record<string, unknown>) => void,
    number,
    RegExp,
    Record<string, string>?,
  ][] = [
    [
      'missing x-api-key',
      () => {},
      401,
      /x-api-key header is required/,
      { 'anthropic-version': '2023-06-01' },
    ],
    ['missing anthropic-version', () => {}, 400, /anthropic-version/, { 'x-api-key': 'k' }],
    ['missing max_tokens', (b) => delete b.max_tokens, 400, /max_tokens: Field required/],
    [
      'unknown top-level field',
      (b) => {
        b.max_completion_tokens = 5;
      },
      400,
      /Extra inputs are not permitted/,
    ],
    [
      'system role in messages',
      (b) => (b.messages as unknown[]).unshift({ role: 'system', content: 'x' }),
      400,
      /Unexpected role "system"/,
    ],
    [
      'empty text block',
      (b) => {
        (b.messages as unknown[])[0] = { role: 'user', content: [{ type: 'text', text: '' }] };
      },
      400,
      /text content blocks must be non-empty/,
    ],
    [
      'first message from the assistant',
      (b) => (b.messages as unknown[]).splice(0, 0, { role: 'assistant', content: 'hi' }),
      400,
      /first message must use the "user" role/,
    ],
    [
      'tool_use without its tool_result',
      (b) => (b.messages as unknown[]).pop(),
      400,
      /`tool_use` ids were found without `tool_result` blocks immediately after: toolu_1, toolu_2/,
    ],
    [
      'tool_result answering nothing',
      (b) => {
        const messages = b.messages as { content: unknown[] }[];
        messages[2]?.content.push({ type: 'tool_result', tool_use_id: 'toolu_9', content: 'x' });
      },
      400,
      /unexpected `tool_use_id` found in `tool_result` blocks: toolu_9/,
    ],
    [
      'tool without input_schema',
      (b) => {
        b.tools = [{ name: 'x', description: 'y' }];
      },
      400,
      /tools\.0\.custom\.input_schema: Field required/,
    ],
    [
      'tool_choice without tools',
      (b) => {
        delete b.tools;
        b.messages = [{ role: 'user', content: 'x' }];
        b.tool_choice = { type: 'auto' };
      },
      400,
      /tool_choice may only be specified while providing tools/,
    ],
    [
      'tool blocks without tools',
      (b) => {
        delete b.tools;
      },
      400,
      /Requests which include `tool_use` or `tool_result` blocks must define tools/,
    ],
    [
      'duplicate tool names',
      (b) => {
        b.tools = [TOOL, TOOL];
      },
      400,
      /Tool names must be unique/,
    ],
    [
      'tool_result after text',
      (b) => {
        const messages = b.messages as { content: unknown[] }[];
        messages[2]?.content.unshift({ type: 'text', text: 'results:' });
      },
      400,
      /tool_result blocks must come first/,
    ],
    [
      'a structured-output object that is not closed',
      (b) => {
        b.output_config = { format: { type: 'json_schema', schema: { type: 'object', properties: {} } } };
      },
      400,
      /'additionalProperties' must be explicitly set to false/,
    ],
    [
      'a numeric bound in a structured-output schema',
      (b) => {
        const score = { type: 'integer', minimum: 1 };
        const schema = { type: 'object', properties: { score }, additionalProperties: false };
        b.output_config = { format: { type: 'json_schema', schema } };
      },
      400,
      /properties\.score: 'minimum' is not supported/,
    ],
  ];
  it.each(malformed)('rejects %s', async (_name, mutate, status, message, headers = HEADERS) => {
    const body = conversation();
    mutate(body);
    fake.enqueue({ text: 'never sent' });
    const res = await post(`${fake.url}/v1/messages`, body, headers);
    expect(res.status).toBe(status);
    expect(at(res.json, 'type')).toBe('error');
    expect(at(res.json, 'error', 'type')).toBe(
      status === 401 ? 'authentication_error' : 'invalid_request_error',
    );
    expect(String(at(res.json, 'error', 'message'))).toMatch(message);
    expect(fake.rejections).toHaveLength(1);
    expect(fake.rejections[0]?.rejection).toMatch(message);
  });

  it('answers an unknown path with a 404 in the Anthropic error shape', async () => {
    const res = await post(`${fake.url}/v1/messages/batches`, {}, HEADERS);
    expect(res.status).toBe(404);
    expect(at(res.json, 'error', 'type')).toBe('not_found_error');
  });
});
