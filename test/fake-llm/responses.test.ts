import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm } from './server.js';
import { parseSse, post } from './test-client.js';
import type { FakeLlm } from './types.js';

/** The fake's Responses API: refuses what the real one refuses, answers in its exact shapes. */
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const AUTH = { authorization: 'Bearer sk-test' };
const tool = {
  type: 'function',
  name: 'read_file',
  description: 'd',
  parameters: { type: 'object', properties: {} },
  strict: false,
};
const conversation = () => ({
  model: 'gpt-5-mini',
  instructions: 'Be brief.',
  tools: [tool],
  input: [
    { role: 'user', content: 'Summarise a' },
    { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"a"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'contents' },
  ],
});

/** The official schemas, vendored: what the real service sends must validate against them. */
const schemaFile = new URL('./vendor/openai/openai-responses.schema.json', import.meta.url);
const schema = JSON.parse(readFileSync(schemaFile, 'utf8')) as { $id: string };
const ajv = new Ajv2020({ strict: false, discriminator: false, logger: false });
ajv.addFormat('unixtime', true);
ajv.addSchema(schema);
const responseSchema = ajv.getSchema(`${schema.$id}#/components/schemas/Response`);
const eventSchema = ajv.getSchema(`${schema.$id}#/components/schemas/ResponseStreamEvent`);

describe('responses wire', () => {
  it('accepts a tool conversation and records it in neutral terms', async () => {
    fake.enqueue({ text: 'done' });
    const sent = await post(`${fake.url}/v1/responses`, conversation(), AUTH);
    expect(sent.status).toBe(200);
    expect(fake.requests[0]).toMatchObject({
      wire: 'responses',
      model: 'gpt-5-mini',
      system: 'Be brief.',
      lastUserText: 'Summarise a',
      toolNames: ['read_file'],
      toolResults: [{ callId: 'call_1', content: 'contents' }],
    });
  });

  it.each([
    ['no key', {}, conversation(), 401, /didn't provide an API key/],
    [
      'an unknown top-level key',
      AUTH,
      { ...conversation(), messages: [] },
      400,
      /Unrecognized request argument supplied: messages/,
    ],
    [
      'max_output_tokens below 16',
      AUTH,
      { ...conversation(), max_output_tokens: 8 },
      400,
      /max_output_tokens/,
    ],
    [
      'a tool output answering no call',
      AUTH,
      { model: 'm', input: [{ type: 'function_call_output', call_id: 'call_x', output: 'o' }] },
      400,
      /No tool call found for function call output with call_id call_x\./,
    ],
    [
      'a call left unanswered',
      AUTH,
      { model: 'm', input: [{ type: 'function_call', call_id: 'call_y', name: 'f', arguments: '{}' }] },
      400,
      /No tool output found for function call call_y\./,
    ],
    [
      'Chat Completions tool shape',
      AUTH,
      { model: 'm', input: 'hi', tools: [{ type: 'function', function: { name: 'f' } }] },
      400,
      /tools/,
    ],
  ])('refuses %s', async (_, headers, body, status, message) => {
    const sent = await post(`${fake.url}/v1/responses`, body, headers);
    expect(sent.status).toBe(status);
    expect(JSON.stringify(sent.json)).toMatch(message);
    expect(fake.requests[0]?.rejection).toBeDefined();
  });

  it('answers with a Response the official schema accepts: text, calls with call_id, usage', async () => {
    fake.enqueue({
      text: 'Hi ✓',
      toolCalls: [{ name: 'read_file', arguments: { path: 'x' } }],
      usage: { input: 30, output: 7, cacheRead: 10 },
    });
    const sent = await post(`${fake.url}/v1/responses`, { model: 'gpt-5-mini', input: 'hi' }, AUTH);
    expect(responseSchema?.(sent.json), JSON.stringify(responseSchema?.errors)).toBe(true);
    expect(sent.json).toMatchObject({
      object: 'response',
      status: 'completed',
      output: [
        { type: 'message', content: [{ type: 'output_text', text: 'Hi ✓' }] },
        {
          type: 'function_call',
          name: 'read_file',
          arguments: '{"path":"x"}',
          call_id: expect.stringMatching(/^call_/),
        },
      ],
      usage: { input_tokens: 30, output_tokens: 7, input_tokens_details: { cached_tokens: 10 } },
    });
  });

  it('streams named events the official schema accepts, ending with response.completed', async () => {
    fake.enqueue({ text: 'Bonjour à tous', toolCalls: [{ name: 'read_file', arguments: { path: 'x' } }] });
    const sent = await post(
      `${fake.url}/v1/responses`,
      { model: 'gpt-5-mini', input: 'hi', stream: true },
      AUTH,
    );
    const events = parseSse(sent.text);
    for (const event of events) {
      const data = JSON.parse(event.data) as { type: string };
      expect(event.event).toBe(data.type);
      expect(eventSchema?.(data), `${data.type}: ${JSON.stringify(eventSchema?.errors)}`).toBe(true);
    }
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });
});
