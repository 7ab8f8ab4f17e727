import { describe, expect, it } from 'vitest';
import * as anthropic from '../../internal/provider/anthropic.js';
import { parseJson, WireError } from '../../internal/provider/json.js';
import * as openai from '../../internal/provider/openai.js';
import { addSecret } from '../../internal/secrets.js';
import { conversation, noTools } from './helpers.js';

describe('anthropic toWire', () => {
  it('translates the conversation with its system prompt, tool_use and tool_result blocks', () => {
    expect(anthropic.toWire(conversation(false))).toEqual({
      model: 'test-model',
      max_tokens: 4096,
      // A string, as Go axe sends it.
      system: 'You are a careful assistant.',
      messages: [
        { role: 'user', content: 'Weather in Paris and the time in Tokyo?' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me check both.' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris', days: 2 } },
            { type: 'tool_use', id: 'call_2', name: 'get_time', input: { zone: 'Asia/Tokyo' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny, 21°C', is_error: false },
            {
              type: 'tool_result',
              tool_use_id: 'call_2',
              content: 'error: time service unavailable',
              is_error: true,
            },
          ],
        },
      ],
      tools: [
        {
          name: 'get_weather',
          description: 'Weather forecast for a city',
          input_schema: conversation(false).tools?.[0]?.parameters,
        },
        {
          name: 'get_time',
          description: 'Current time in a time zone',
          input_schema: conversation(false).tools?.[1]?.parameters,
        },
      ],
    });
  });

  it('[params] prompt_caching: the system prompt as a cache breakpoint, the rest as without it', () => {
    const plain = anthropic.toWire(conversation(false));
    const cached = anthropic.toWire({ ...conversation(false), promptCaching: 'system' });
    expect(cached).toEqual({
      ...plain,
      system: [{ type: 'text', text: 'You are a careful assistant.', cache_control: { type: 'ephemeral' } }],
    });
  });

  it('no tools key without tools, no system without a prompt, explicit temperature 0, max tokens', () => {
    const body = anthropic.toWire({ ...noTools(true), system: '', temperature: 0, maxTokens: 100 });
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('system');
    expect(body).toMatchObject({ temperature: 0, max_tokens: 100, stream: true });
  });

  it('omits an empty text block from an assistant turn that only calls tools', () => {
    const request = conversation(false);
    request.messages[1] = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 't', name: 'x', arguments: {} }],
    };
    const messages = anthropic.toWire(request).messages as { content: unknown[] }[];
    expect(messages[1]?.content).toEqual([{ type: 'tool_use', id: 't', name: 'x', input: {} }]);
  });

  it('fromWire reads text, tool calls with typed input and cache usage', () => {
    const response = anthropic.fromWire({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'text', text: 'Checking.' },
        {
          type: 'tool_use',
          id: 'toolu_1',
          name: 'get_weather',
          input: { city: 'Oslo', days: 3, metric: true },
        },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 5,
        cache_read_input_tokens: 100,
        cache_creation_input_tokens: 7,
      },
    });
    expect(response).toEqual({
      content: 'Checking.',
      toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Oslo', days: 3, metric: true } }],
      stopReason: 'tool_use',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 100, cacheWriteTokens: 7 },
      model: 'claude-sonnet-4-5',
    });
  });
});

describe('openai toWire', () => {
  it('translates the conversation: system message, JSON-string arguments, one tool message per result', () => {
    const body = openai.toWire(conversation(true, { maxTokens: 300, temperature: 0 }));
    expect(body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'You are a careful assistant.' },
        { role: 'user', content: 'Weather in Paris and the time in Tokyo?' },
        {
          role: 'assistant',
          content: 'Let me check both.',
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris","days":2}' },
            },
            {
              id: 'call_2',
              type: 'function',
              function: { name: 'get_time', arguments: '{"zone":"Asia/Tokyo"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21°C' },
        { role: 'tool', tool_call_id: 'call_2', content: 'error: time service unavailable' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather forecast for a city',
            parameters: conversation(false).tools?.[0]?.parameters,
          },
        },
        {
          type: 'function',
          function: {
            name: 'get_time',
            description: 'Current time in a time zone',
            parameters: conversation(false).tools?.[1]?.parameters,
          },
        },
      ],
      temperature: 0,
      max_completion_tokens: 300,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('content null for an assistant turn with only tool calls; no tools key without tools', () => {
    const request = noTools();
    request.messages[1] = {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'c', name: 'x', arguments: {} }],
    };
    const body = openai.toWire(request);
    expect(body).not.toHaveProperty('tools');
    expect(body).not.toHaveProperty('stream');
    expect((body.messages as unknown[])[2]).toMatchObject({ role: 'assistant', content: null });
  });

  it('response_format: text, json_object, json_schema', () => {
    const format = (responseFormat: Parameters<typeof openai.toWire>[0]['responseFormat']) =>
      openai.toWire({ ...noTools(), responseFormat }).response_format;
    expect(format({ type: 'text' })).toEqual({ type: 'text' });
    expect(format({ type: 'json_object' })).toEqual({ type: 'json_object' });
    expect(format({ type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true })).toEqual(
      {
        type: 'json_schema',
        json_schema: { name: 'answer', schema: { type: 'object' }, strict: true },
      },
    );
  });

  it('fromWire: unparseable or non-object arguments become argumentsError, cached tokens and cost', () => {
    const response = openai.fromWire({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4.1',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'a', type: 'function', function: { name: 'f', arguments: '{"n": 1.5, "ok": false}' } },
              { id: 'b', type: 'function', function: { name: 'g', arguments: '{"broken": ' } },
              { id: 'c', type: 'function', function: { name: 'h', arguments: '[1,2]' } },
            ],
          },
        },
      ],
      usage: {
        prompt_tokens: 50,
        completion_tokens: 9,
        prompt_tokens_details: { cached_tokens: 20 },
        cost: 0.5,
      },
    });
    expect(response.content).toBe('');
    expect(response.toolCalls[0]).toEqual({ id: 'a', name: 'f', arguments: { n: 1.5, ok: false } });
    expect(response.toolCalls[1]).toMatchObject({ id: 'b', name: 'g', arguments: {} });
    expect(response.toolCalls[1]?.argumentsError).toMatch(/not valid JSON/);
    expect(response.toolCalls[2]?.argumentsError).toMatch(/must be a JSON object/);
    expect(response.usage).toEqual({
      inputTokens: 30,
      outputTokens: 9,
      cacheReadTokens: 20,
      cacheWriteTokens: 0,
    });
    expect(response.cost).toBe(0.5);
  });
});

describe('bodies that are not JSON', () => {
  it('are named with a short, readable preview (or as empty)', () => {
    expect(() => parseJson('', 'the response body')).toThrow(new WireError('the response body is empty'));
    expect(() => parseJson('<html>\n  <b>Bad Gateway</b>', 'the response body')).toThrow(
      new WireError('the response body is not valid JSON: <html> <b>Bad Gateway</b>'),
    );
    expect(() => parseJson(`{"a": "${'x'.repeat(100)}`, 'stream event')).toThrow(
      new WireError(`stream event is not valid JSON: {"a": "${'x'.repeat(73)}…`),
    );
  });

  it('masks a key in the preview before it is cut: no part of it is left', () => {
    const key = 'sk-preview-0123456789abcdefghijklmnop';
    addSecret(key);
    expect(() => parseJson(`{"a": "${'x'.repeat(60)} ${key} tail`, 'the response body')).toThrow(
      new WireError(`the response body is not valid JSON: {"a": "${'x'.repeat(60)} *** tail`),
    );
  });
});
