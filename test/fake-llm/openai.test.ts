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

const AUTH = { authorization: 'Bearer sk-test' };
const tool = (name: string) => ({
  type: 'function',
  function: {
    name,
    description: 'd',
    parameters: { type: 'object', properties: { path: { type: 'string' } } },
  },
});
const call = (id: string, name: string) => ({
  id,
  type: 'function',
  function: { name, arguments: '{"path":"a"}' },
});

function conversation(): Record<string, unknown> {
  return {
    model: 'gpt-4o',
    max_completion_tokens: 256,
    tools: [tool('read_file'), tool('list_dir')],
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Summarise a' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [call('call_1', 'read_file'), call('call_2', 'list_dir')],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'hello' },
      { role: 'tool', tool_call_id: 'call_2', content: 'error: EACCES' },
    ],
  };
}

describe('openai wire', () => {
  it('accepts a tool conversation and renders tool_calls with JSON-string arguments, usage and cost', async () => {
    fake.enqueue({
      toolCalls: [
        { name: 'read_file', arguments: { path: 'b', n: 2 } },
        { id: 'call_raw', name: 'list_dir', arguments: '{broken' },
      ],
      usage: { input: 50, output: 7, cacheRead: 40, cost: 0.0012 },
    });
    const res = await post(`${fake.url}/v1/chat/completions`, conversation(), AUTH);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const message = at(res.json, 'choices', 0, 'message');
    expect(at(res.json, 'choices', 0, 'finish_reason')).toBe('tool_calls');
    expect(at(message, 'content')).toBeNull();
    expect(at(message, 'tool_calls', 0, 'function', 'arguments')).toBe('{"path":"b","n":2}');
    expect(at(message, 'tool_calls', 0, 'id')).toMatch(/^call_/);
    expect(at(message, 'tool_calls', 1)).toEqual({
      id: 'call_raw',
      type: 'function',
      function: { name: 'list_dir', arguments: '{broken' },
    });
    expect(at(res.json, 'usage')).toMatchObject({
      prompt_tokens: 50,
      completion_tokens: 7,
      total_tokens: 57,
      prompt_tokens_details: { cached_tokens: 40 },
      cost: 0.0012,
    });
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]).toMatchObject({
      wire: 'openai',
      system: 'Be brief.',
      lastUserText: 'Summarise a',
      toolNames: ['read_file', 'list_dir'],
      toolResults: [
        { callId: 'call_1', content: 'hello' },
        { callId: 'call_2', content: 'error: EACCES' },
      ],
    });
  });

  it('streams data-only chunks with a comment, split tool-call arguments, usage and [DONE]', async () => {
    fake.enqueue({
      text: 'Done reading',
      toolCalls: [{ name: 'read_file', arguments: { path: 'some/long/path.txt' } }],
      usage: { input: 9, output: 3 },
    });
    const body = { ...conversation(), stream: true, stream_options: { include_usage: true } };
    const res = await post(`${fake.url}/v1/chat/completions`, body, AUTH);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.text).toContain(': OPENROUTER PROCESSING\n\n');
    const events = parseSse(res.text);
    expect(events.every((e) => e.event === undefined)).toBe(true);
    expect(events.at(-1)?.data).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data) as unknown);
    const deltas = chunks.map((c) => at(c, 'choices', 0, 'delta'));
    const text = deltas.map((d) => at(d, 'content') ?? '').join('');
    expect(text).toBe('Done reading');
    const argPieces = deltas
      .map((d) => at(d, 'tool_calls', 0, 'function', 'arguments'))
      .filter((a) => typeof a === 'string' && a !== '');
    expect(argPieces.length).toBeGreaterThan(1);
    expect(JSON.parse(argPieces.join(''))).toEqual({ path: 'some/long/path.txt' });
    expect(chunks.map((c) => at(c, 'choices', 0, 'finish_reason')).filter(Boolean)).toEqual(['tool_calls']);
    expect(at(chunks.at(-1), 'choices')).toEqual([]);
    expect(at(chunks.at(-1), 'usage', 'prompt_tokens')).toBe(9);
  });

  it('sends no usage chunk when the stream does not ask for it', async () => {
    fake.enqueue({ text: 'hi' });
    const res = await post(`${fake.url}/v1/chat/completions`, { ...conversation(), stream: true }, AUTH);
    const chunks = parseSse(res.text)
      .slice(0, -1)
      .map((e) => JSON.parse(e.data) as unknown);
    expect(chunks.some((c) => at(c, 'usage') !== undefined)).toBe(false);
    expect(chunks.at(-1)).toMatchObject({ choices: [{ finish_reason: 'stop' }] });
  });

  type Case = [string, (body: Record<string, unknown>) => void, number, RegExp, Record<string, string>?];
  const messages = (b: Record<string, unknown>) => b.messages as Record<string, unknown>[];
  const malformed: Case[] = [
    ['no bearer token', () => {}, 401, /didn't provide an API key/, {}],
    ['a body that is not JSON', () => {}, 400, /could not parse the JSON body/],
    [
      'an unknown argument',
      (b) => {
        b.max_tokens_to_sample = 5;
      },
      400,
      /Unrecognized request argument supplied: max_tokens_to_sample/,
    ],
    [
      'a message without content',
      (b) => {
        delete messages(b)[1]?.content;
      },
      400,
      /Missing required parameter: 'messages\[1\]\.content'/,
    ],
    [
      'object tool-call arguments',
      (b) => {
        messages(b)[2] = {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'x', arguments: {} } }],
        };
      },
      400,
      /Invalid type for 'messages\[2\]\.tool_calls\[0\]\.function\.arguments': expected string/,
    ],
    [
      'an empty tools array',
      (b) => {
        b.tools = [];
      },
      400,
      /Invalid 'tools': empty array/,
    ],
    [
      'stream_options without stream',
      (b) => {
        b.stream_options = { include_usage: true };
      },
      400,
      /only allowed when 'stream' is enabled/,
    ],
    [
      'tool_choice without tools',
      (b) => {
        delete b.tools;
        b.messages = [{ role: 'user', content: 'x' }];
        b.tool_choice = 'auto';
      },
      400,
      /'tool_choice' is only allowed when 'tools' are specified/,
    ],
    [
      'a tool message answering nothing',
      (b) => {
        messages(b)[4] = { role: 'tool', tool_call_id: 'call_9', content: 'x' };
      },
      400,
      /must be a response to a preceeding message with 'tool_calls'/,
    ],
    [
      'an unanswered tool call',
      (b) => {
        messages(b).splice(4, 1);
      },
      400,
      /did not have response messages: call_2/,
    ],
    [
      'a user message before the tool answers',
      (b) => {
        messages(b).splice(3, 0, { role: 'user', content: 'wait' });
      },
      400,
      /did not have response messages: call_1, call_2/,
    ],
  ];
  it.each(malformed)('rejects %s', async (name, mutate, status, message, headers = AUTH) => {
    const body = conversation();
    mutate(body);
    fake.enqueue({ text: 'never sent' });
    const res = await post(
      `${fake.url}/v1/chat/completions`,
      name.includes('not JSON') ? '{"model":' : body,
      headers,
    );
    expect(res.status).toBe(status);
    expect(Object.keys(at(res.json, 'error') as object).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(at(res.json, 'error', 'type')).toBe('invalid_request_error');
    expect(String(at(res.json, 'error', 'message'))).toMatch(message);
    expect(fake.rejections.map((r) => r.rejection)).toEqual([expect.stringMatching(message)]);
  });
});
