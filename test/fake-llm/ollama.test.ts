import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm } from './server.js';
import { at, parseNdjson, post } from './test-client.js';
import type { FakeLlm } from './types.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const tool = (name: string) => ({
  type: 'function',
  function: { name, description: 'd', parameters: { type: 'object', properties: {} } },
});

function conversation(): Record<string, unknown> {
  return {
    model: 'llama3.2',
    stream: false,
    options: { temperature: 0.2, num_predict: 100 },
    tools: [tool('read_file'), tool('list_dir')],
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Summarise a' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { function: { name: 'read_file', arguments: { path: 'a' } } },
          { function: { name: 'list_dir', arguments: { path: '.' } } },
        ],
      },
      { role: 'tool', tool_name: 'read_file', content: 'hello' },
      { role: 'tool', tool_name: 'list_dir', content: 'error: EACCES' },
    ],
  };
}

describe('ollama wire', () => {
  it('accepts a tool conversation and renders object arguments without ids, with eval counts', async () => {
    fake.enqueue({
      toolCalls: [{ name: 'read_file', arguments: { path: 'b', n: 2 } }],
      usage: { input: 30, output: 4 },
    });
    const res = await post(`${fake.url}/api/chat`, conversation());
    expect(res.status).toBe(200);
    expect(at(res.json, 'message', 'tool_calls', 0, 'function')).toEqual({
      index: 0,
      name: 'read_file',
      arguments: { path: 'b', n: 2 },
    });
    expect(at(res.json, 'message', 'tool_calls', 0, 'id')).toBeUndefined();
    expect(res.json).toMatchObject({
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 30,
      eval_count: 4,
      model: 'llama3.2',
    });
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]).toMatchObject({
      wire: 'ollama',
      stream: false,
      system: 'Be brief.',
      lastUserText: 'Summarise a',
      toolNames: ['read_file', 'list_dir'],
      toolResults: [
        { name: 'read_file', content: 'hello' },
        { name: 'list_dir', content: 'error: EACCES' },
      ],
    });
  });

  it('streams NDJSON by default when the request does not say stream:false', async () => {
    fake.enqueue({ text: 'streamed answer', usage: { input: 3, output: 2 } });
    const body = conversation();
    delete body.stream;
    const res = await post(`${fake.url}/api/chat`, body);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = parseNdjson(res.text);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.map((l) => at(l, 'message', 'content')).join('')).toBe('streamed answer');
    expect(lines.slice(0, -1).every((l) => at(l, 'done') === false)).toBe(true);
    expect(lines.at(-1)).toMatchObject({
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 3,
      eval_count: 2,
    });
    expect(fake.requests[0]?.stream).toBe(true);
  });

  it('streams tool calls in one line', async () => {
    fake.enqueue({ toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    const res = await post(`${fake.url}/api/chat`, { ...conversation(), stream: true });
    const lines = parseNdjson(res.text);
    const withCalls = lines.filter((l) => at(l, 'message', 'tool_calls') !== undefined);
    expect(withCalls).toHaveLength(1);
    expect(at(withCalls[0], 'message', 'tool_calls', 0, 'function', 'arguments')).toEqual({ path: '.' });
  });

  type Case = [string, (body: Record<string, unknown>) => void, RegExp];
  const messages = (b: Record<string, unknown>) => b.messages as Record<string, unknown>[];
  const malformed: Case[] = [
    [
      'string tool-call arguments',
      (b) => {
        messages(b)[2] = {
          role: 'assistant',
          content: '',
          tool_calls: [{ function: { name: 'x', arguments: '{"path":"a"}' } }],
        };
      },
      /cannot unmarshal string into Go struct field .*arguments of type api\.ToolCallFunctionArguments/,
    ],
    [
      'an unknown role',
      (b) => {
        messages(b)[1] = { role: 'human', content: 'x' };
      },
      /invalid role: "human"/,
    ],
    [
      'array content',
      (b) => {
        messages(b)[1] = { role: 'user', content: [{ type: 'text', text: 'x' }] };
      },
      /cannot unmarshal array into Go struct field Message\.messages\.content of type string/,
    ],
    [
      'a missing model',
      (b) => {
        delete b.model;
      },
      /model is required/,
    ],
    [
      'options that are not an object',
      (b) => {
        b.options = 'fast';
      },
      /cannot unmarshal string into Go struct field ChatRequest\.options/,
    ],
    [
      'a tool parameter constraint Ollama would drop',
      (b) => {
        b.tools = [
          {
            type: 'function',
            function: {
              name: 'n',
              parameters: { type: 'object', properties: { x: { type: 'integer', minimum: 1 } } },
            },
          },
        ];
      },
      /tool "n": property "x" key "minimum" would be dropped by Ollama/,
    ],
    [
      'additionalProperties in tool parameters',
      (b) => {
        b.tools = [
          {
            type: 'function',
            function: { name: 'n', parameters: { type: 'object', additionalProperties: false } },
          },
        ];
      },
      /parameters key "additionalProperties" would be dropped/,
    ],
  ];
  it.each(malformed)('rejects %s with 400 {"error": …}', async (_name, mutate, message) => {
    const body = conversation();
    mutate(body);
    fake.enqueue({ text: 'never sent' });
    const res = await post(`${fake.url}/api/chat`, body);
    expect(res.status).toBe(400);
    expect(Object.keys(res.json as object)).toEqual(['error']);
    expect(String(at(res.json, 'error'))).toMatch(message);
    expect(fake.rejections).toHaveLength(1);
  });
});
