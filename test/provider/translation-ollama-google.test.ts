import { describe, expect, it } from 'vitest';
import * as google from '../../internal/provider/google.js';
import * as ollama from '../../internal/provider/ollama.js';
import { conversation, noTools } from './helpers.js';

describe('ollama toWire', () => {
  it('stream false, options, object arguments, tool_name on tool messages, format', () => {
    const body = ollama.toWire(
      conversation(false, { temperature: 0, maxTokens: 64, responseFormat: { type: 'json_object' } }),
    );
    expect(body).toMatchObject({
      model: 'test-model',
      stream: false,
      options: { temperature: 0, num_predict: 64 },
      format: 'json',
    });
    expect(body.messages).toEqual([
      { role: 'system', content: 'You are a careful assistant.' },
      { role: 'user', content: 'Weather in Paris and the time in Tokyo?' },
      {
        role: 'assistant',
        content: 'Let me check both.',
        tool_calls: [
          { function: { name: 'get_weather', arguments: { city: 'Paris', days: 2 } } },
          { function: { name: 'get_time', arguments: { zone: 'Asia/Tokyo' } } },
        ],
      },
      { role: 'tool', content: 'Sunny, 21°C', tool_name: 'get_weather' },
      { role: 'tool', content: 'error: time service unavailable', tool_name: 'get_time' },
    ]);
    expect(
      ollama.toWire({
        ...noTools(true),
        responseFormat: { type: 'json_schema', name: 'a', schema: { type: 'object' } },
      }),
    ).toMatchObject({ stream: true, format: { type: 'object' } });
    expect(ollama.toWire(noTools())).not.toHaveProperty('tools');
    expect(ollama.toWire(noTools())).not.toHaveProperty('options');
  });

  it('reduces tool schemas to the keys Ollama reads and writes the rest into the descriptions', () => {
    const body = ollama.toWire({
      ...noTools(),
      tools: [
        {
          name: 'fetch_rows',
          description: 'Reads rows.',
          parameters: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            properties: {
              limit: { type: 'integer', description: 'How many.', minimum: 1, maximum: 50 },
              order: { type: 'string', enum: ['asc', 'desc'] },
              filter: { type: 'object', properties: { col: { type: 'string' } }, required: ['col'] },
              tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } },
            },
            required: ['limit'],
            additionalProperties: false,
            minProperties: 1,
          },
        },
        { name: 'plain', description: 'No constraints.', parameters: { type: 'object', properties: {} } },
      ],
    });
    expect(body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'fetch_rows',
          description: 'Reads rows. (JSON Schema: {"minProperties":1})',
          parameters: {
            type: 'object',
            properties: {
              limit: { type: 'integer', description: 'How many. (JSON Schema: {"minimum":1,"maximum":50})' },
              order: { type: 'string', enum: ['asc', 'desc'] },
              filter: {
                type: 'object',
                description: 'JSON Schema: {"properties":{"col":{"type":"string"}},"required":["col"]}',
              },
              tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } },
            },
            required: ['limit'],
          },
        },
      },
      {
        type: 'function',
        function: {
          name: 'plain',
          description: 'No constraints.',
          parameters: { type: 'object', properties: {} },
        },
      },
    ]);
  });

  it('fromWire synthesises ollama_<i> ids and reads the counts', () => {
    const response = ollama.fromWire({
      model: 'llama3.2',
      message: {
        role: 'assistant',
        content: '',
        tool_calls: [
          { function: { name: 'a', arguments: { x: 1 } } },
          { function: { name: 'b', arguments: { y: [true] } } },
        ],
      },
      done: true,
      done_reason: 'stop',
      prompt_eval_count: 12,
      eval_count: 3,
    });
    expect(response.toolCalls).toEqual([
      { id: 'ollama_0', name: 'a', arguments: { x: 1 } },
      { id: 'ollama_1', name: 'b', arguments: { y: [true] } },
    ]);
    expect(response.usage).toEqual({
      inputTokens: 12,
      outputTokens: 3,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    });
  });
});

describe('google toWire', () => {
  it('systemInstruction, functionDeclarations, functionCall with id and signature, functionResponse with id, output / error', () => {
    const request = conversation(false, { temperature: 0, maxTokens: 99 });
    const assistant = request.messages[1];
    if (assistant?.role === 'assistant' && assistant.toolCalls?.[0])
      assistant.toolCalls[0].signature = 'sig==';
    expect(google.toWire(request)).toEqual({
      systemInstruction: { parts: [{ text: 'You are a careful assistant.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'Weather in Paris and the time in Tokyo?' }] },
        {
          role: 'model',
          parts: [
            { text: 'Let me check both.' },
            {
              functionCall: { id: 'call_1', name: 'get_weather', args: { city: 'Paris', days: 2 } },
              thoughtSignature: 'sig==',
            },
            { functionCall: { id: 'call_2', name: 'get_time', args: { zone: 'Asia/Tokyo' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_1', name: 'get_weather', response: { output: 'Sunny, 21°C' } } },
            {
              functionResponse: {
                id: 'call_2',
                name: 'get_time',
                response: { error: 'error: time service unavailable' },
              },
            },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather forecast for a city',
              parametersJsonSchema: request.tools?.[0]?.parameters,
            },
            {
              name: 'get_time',
              description: 'Current time in a time zone',
              parametersJsonSchema: request.tools?.[1]?.parameters,
            },
          ],
        },
      ],
      generationConfig: { temperature: 0, maxOutputTokens: 99 },
    });
  });

  it('JSON response formats set responseMimeType and responseJsonSchema; urls per mode', () => {
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(
      google.toWire({ ...noTools(), responseFormat: { type: 'json_schema', name: 'x', schema } }),
    ).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema },
    });
    expect(google.toWire(noTools())).not.toHaveProperty('tools');
    expect(google.toWire(noTools())).not.toHaveProperty('generationConfig');
    expect(google.url('http://h/', noTools(false))).toBe('http://h/v1beta/models/test-model:generateContent');
    expect(google.url('http://h', noTools(true))).toBe(
      'http://h/v1beta/models/test-model:streamGenerateContent?alt=sse',
    );
  });

  it('fromWire skips thought parts and reads modelVersion', () => {
    const response = google.fromWire({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'thinking…', thought: true }, { text: 'Answer.' }] },
          finishReason: 'STOP',
        },
      ],
      usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 2 },
      modelVersion: 'gemini-2.5-pro',
    });
    expect(response).toMatchObject({
      content: 'Answer.',
      stopReason: 'STOP',
      model: 'gemini-2.5-pro',
      toolCalls: [],
    });
  });
});
