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

const KEY = { 'x-goog-api-key': 'AIza-test' };
const declaration = (name: string) => ({
  name,
  description: 'd',
  parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
});

function conversation(): Record<string, unknown> {
  return {
    systemInstruction: { parts: [{ text: 'Be brief.' }] },
    tools: [{ functionDeclarations: [declaration('read_file'), declaration('list_dir')] }],
    generationConfig: { temperature: 0.1, maxOutputTokens: 100 },
    contents: [
      { role: 'user', parts: [{ text: 'Summarise a' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'read_file', args: { path: 'a' } } },
          { functionCall: { name: 'list_dir', args: { path: '.' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'read_file', response: { output: 'hello' } } },
          { functionResponse: { name: 'list_dir', response: { error: 'EACCES' } } },
        ],
      },
    ],
  };
}

const generate = (model = 'gemini-2.5-flash') => `${fake.url}/v1beta/models/${model}:generateContent`;
const streamUrl = (model = 'gemini-2.5-flash') =>
  `${fake.url}/v1beta/models/${model}:streamGenerateContent?alt=sse`;

describe('google wire', () => {
  it('accepts a function-calling conversation and renders functionCall parts with usageMetadata', async () => {
    fake.enqueue({
      text: 'Checking.',
      toolCalls: [{ name: 'read_file', arguments: { path: 'b' } }],
      usage: { input: 12, output: 4, cacheRead: 6 },
    });
    const res = await post(generate(), conversation(), KEY);
    expect(res.status).toBe(200);
    const candidate = at(res.json, 'candidates', 0);
    expect(at(candidate, 'content', 'role')).toBe('model');
    expect(at(candidate, 'content', 'parts')).toEqual([
      { text: 'Checking.' },
      { functionCall: { name: 'read_file', args: { path: 'b' } } },
    ]);
    expect(at(candidate, 'finishReason')).toBe('STOP');
    expect(at(res.json, 'usageMetadata')).toEqual({
      promptTokenCount: 12,
      candidatesTokenCount: 4,
      totalTokenCount: 16,
      cachedContentTokenCount: 6,
    });
    expect(at(res.json, 'modelVersion')).toBe('gemini-2.5-flash');
    expect(fake.rejections).toEqual([]);
    expect(fake.requests[0]).toMatchObject({
      wire: 'google',
      model: 'gemini-2.5-flash',
      stream: false,
      system: 'Be brief.',
      lastUserText: 'Summarise a',
      toolNames: ['read_file', 'list_dir'],
      toolResults: [
        { name: 'read_file', content: 'hello', isError: false },
        { name: 'list_dir', content: 'EACCES', isError: true },
      ],
    });
  });

  it('streams SSE chunks with text split over several events and the finish reason last', async () => {
    fake.enqueue({ text: 'a streamed reply', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] });
    const res = await post(streamUrl(), conversation(), KEY);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.text).toContain('\r\n\r\n');
    const chunks = parseSse(res.text).map((e) => JSON.parse(e.data) as unknown);
    expect(chunks.length).toBeGreaterThan(2);
    const parts = chunks.flatMap((c) => at(c, 'candidates', 0, 'content', 'parts') as unknown[]);
    expect(parts.map((p) => at(p, 'text') ?? '').join('')).toBe('a streamed reply');
    expect(parts.filter((p) => at(p, 'functionCall') !== undefined)).toEqual([
      { functionCall: { name: 'list_dir', args: { path: '.' } } },
    ]);
    expect(chunks.map((c) => at(c, 'candidates', 0, 'finishReason'))).toEqual([
      ...chunks.slice(1).map(() => undefined),
      'STOP',
    ]);
    expect(fake.requests[0]?.stream).toBe(true);
  });

  type Case = [string, (body: Record<string, unknown>) => void, number, RegExp, Record<string, string>?];
  const contents = (b: Record<string, unknown>) => b.contents as Record<string, unknown>[];
  const malformed: Case[] = [
    ['a missing API key', () => {}, 403, /unregistered callers/, {}],
    [
      'an invalid role',
      (b) => {
        contents(b)[0] = { role: 'assistant', parts: [{ text: 'x' }] };
      },
      400,
      /Please use a valid role: user, model\./,
    ],
    [
      'a function response without a call before it',
      (b) => {
        contents(b).splice(1, 1);
      },
      400,
      /function response turn comes immediately after a function call turn/,
    ],
    [
      'fewer responses than calls',
      (b) => {
        (contents(b)[2]!.parts as unknown[]).pop();
      },
      400,
      /number of function response parts is equal/,
    ],
    [
      'a string systemInstruction',
      (b) => {
        b.systemInstruction = 'Be brief.';
      },
      400,
      /Invalid value at 'system_instruction'/,
    ],
    [
      'additionalProperties in parameters',
      (b) => {
        b.tools = [
          {
            functionDeclarations: [
              {
                ...declaration('x'),
                parameters: {
                  type: 'object',
                  properties: { a: { type: 'string' } },
                  additionalProperties: false,
                },
              },
            ],
          },
        ];
      },
      400,
      /Unknown name "additionalProperties" at 'tools\[0\]\.function_declarations\[0\]\.parameters'/,
    ],
    [
      'an object schema without properties',
      (b) => {
        b.tools = [
          {
            functionDeclarations: [
              { name: 'noargs', description: 'd', parameters: { type: 'object', properties: {} } },
            ],
          },
        ];
      },
      400,
      /properties: should be non-empty for OBJECT type/,
    ],
    [
      'an invalid function name',
      (b) => {
        b.tools = [{ functionDeclarations: [declaration('read file')] }];
      },
      400,
      /Invalid function name/,
    ],
    [
      'an unknown field',
      (b) => {
        b.system = 'x';
      },
      400,
      /Unknown name "system": Cannot find field/,
    ],
    [
      'tools with a JSON response on a model before Gemini 3',
      (b) => {
        b.generationConfig = { responseMimeType: 'application/json' };
      },
      400,
      /Function calling with a response mime type: 'application\/json' is unsupported/,
    ],
  ];
  it('takes tools with a JSON response from Gemini 3 on', async () => {
    fake.enqueue({ text: '{}' });
    const body = { ...conversation(), generationConfig: { responseMimeType: 'application/json' } };
    expect((await post(generate('gemini-3-flash-preview'), body, KEY)).status).toBe(200);
  });

  it.each(malformed)('rejects %s', async (_name, mutate, status, message, headers = KEY) => {
    const body = conversation();
    mutate(body);
    fake.enqueue({ text: 'never sent' });
    const res = await post(generate(), body, headers);
    expect(res.status).toBe(status);
    expect(at(res.json, 'error', 'code')).toBe(status);
    expect(at(res.json, 'error', 'status')).toBe(status === 403 ? 'PERMISSION_DENIED' : 'INVALID_ARGUMENT');
    expect(String(at(res.json, 'error', 'message'))).toMatch(message);
    expect(fake.rejections).toHaveLength(1);
  });

  it('accepts snake_case field names and the key as a query parameter', async () => {
    fake.enqueue({ text: 'ok' });
    const body = {
      system_instruction: { parts: [{ text: 'S' }] },
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    };
    const res = await post(`${generate()}?key=AIza-test`, body);
    expect(res.status).toBe(200);
    expect(fake.requests[0]?.system).toBe('S');
  });
});
