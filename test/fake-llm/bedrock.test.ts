import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLlm } from './server.js';
import { post, postSignedConverse } from './test-client.js';
import type { FakeLlm } from './types.js';

/** The fake's Bedrock Converse API: the signature and the conversation rules Bedrock enforces. */
let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

function signed(body: unknown, secret?: string) {
  return postSignedConverse(fake.url, 'anthropic.claude-x:0', body, secret);
}

const user = (text: string) => ({ role: 'user', content: [{ text }] });
const tool = { toolSpec: { name: 'f', description: 'd', inputSchema: { json: { type: 'object' } } } };

describe('bedrock wire', () => {
  it('answers a signed conversation; records the model from the path', async () => {
    fake.enqueue({ text: 'hi', toolCalls: [{ name: 'f', arguments: { a: 1 } }] });
    const sent = await signed({
      system: [{ text: 'Be brief.' }],
      messages: [user('hello')],
      toolConfig: { tools: [tool] },
    });
    expect(sent.status).toBe(200);
    expect(sent.json).toMatchObject({
      output: {
        message: {
          role: 'assistant',
          content: [{ text: 'hi' }, { toolUse: { name: 'f', input: { a: 1 } } }],
        },
      },
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5 },
    });
    expect(fake.requests[0]).toMatchObject({
      wire: 'bedrock',
      model: 'anthropic.claude-x:0',
      system: 'Be brief.',
    });
  });

  it.each([
    [
      'a bad signature',
      () => signed({ messages: [user('x')] }, 'wrong'),
      403,
      /signature we calculated does not match/,
    ],
    [
      'no signature',
      () => post(`${fake.url}/model/m/converse`, { messages: [user('x')] }),
      403,
      /Missing Authentication Token/,
    ],
    [
      'an unknown key',
      () => signed({ messages: [user('x')], max_tokens: 5 }),
      400,
      /extraneous key \[max_tokens\]/,
    ],
    ['blank text', () => signed({ messages: [user(' ')] }), 400, /is blank/],
    [
      'two user turns in a row',
      () => signed({ messages: [user('a'), user('b')] }),
      400,
      /alternate between user and assistant/,
    ],
    [
      'a toolUse left unanswered',
      () =>
        signed({
          toolConfig: { tools: [tool] },
          messages: [
            user('a'),
            { role: 'assistant', content: [{ toolUse: { toolUseId: 't1', name: 'f', input: {} } }] },
            user('b'),
          ],
        }),
      400,
      /Expected toolResult blocks at messages\.2\.content for the following Ids: t1/,
    ],
    [
      'an inputSchema without json',
      () =>
        signed({
          toolConfig: { tools: [{ toolSpec: { name: 'f', inputSchema: { type: 'object' } } }] },
          messages: [user('a')],
        }),
      400,
      /inputSchema\.json/,
    ],
  ])('refuses %s', async (_, send, status, message) => {
    const sent = await send();
    expect(sent.status).toBe(status);
    expect(sent.headers.get('x-amzn-errortype')).toMatch(/Exception:/);
    expect(JSON.stringify(sent.json)).toMatch(message);
  });
});
