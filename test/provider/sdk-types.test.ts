import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import * as anthropic from '../../internal/provider/anthropic.js';
import * as google from '../../internal/provider/google.js';
import * as ollama from '../../internal/provider/ollama.js';
import * as openai from '../../internal/provider/openai.js';
import * as responses from '../../internal/provider/responses.js';
import type { ChatRequest, JsonObject, Message } from '../../internal/provider/types.js';
import { conversation } from './helpers.js';

/**
 * Every request body axe sends for a rich conversation — tools, calls, results (one an error),
 * system prompt, temperature, token limit, streaming, response formats, thinking settings and
 * reasoning sent back — type-checked with tsc against the official SDKs' request types (dev
 * dependencies, never loaded by axe). Object literals get TypeScript's excess-property check, so a
 * field the API does not define fails as surely as a wrong type. Gemini's REST body is built from
 * @google/genai's REST-shaped part types (`Content`, `Tool`, `GenerationConfig`, …).
 * @anthropic-ai/sdk is pinned at 0.137.0, the last release for `anthropic-version: 2023-06-01`,
 * the API version axe (like Go axe) sends; 1.x types API version 2026-10-21, which has no
 * `temperature`.
 */
const SCHEMA: JsonObject = {
  type: 'object',
  properties: { verdict: { type: 'string', enum: ['ok', 'bad'] }, score: { type: 'integer', minimum: 1 } },
  required: ['verdict'],
};
const JSON_SCHEMA = { type: 'json_schema', name: 'review', schema: SCHEMA, strict: true } as const;

/** The conversation with Anthropic thinking blocks (signed and redacted) ahead of its tool calls. */
function withReasoning(request: ChatRequest): ChatRequest {
  const messages = request.messages.map(
    (message): Message =>
      message.role === 'assistant'
        ? {
            ...message,
            reasoning: [
              { type: 'thinking', text: 'Two lookups.', signature: 'sig-abc' },
              { type: 'redacted', data: 'ENCRYPTED' },
            ],
          }
        : message,
  );
  return { ...request, messages };
}

function variants(extra: Partial<ChatRequest>[]): ChatRequest[] {
  const base = { temperature: 0.3, maxTokens: 256 };
  return [false, true].flatMap((stream) => [
    conversation(stream, base),
    conversation(stream, { tools: [] }),
    ...extra.map((overrides) => conversation(stream, { ...base, ...overrides })),
  ]);
}

const GEMINI_REST = `type GeminiRest = {
  contents: genai.Content[];
  systemInstruction?: genai.Content;
  tools?: genai.Tool[];
  toolConfig?: genai.ToolConfig;
  safetySettings?: genai.SafetySetting[];
  generationConfig?: genai.GenerationConfig;
};`;

const wires: { name: string; type: string; bodies: JsonObject[] }[] = [
  {
    name: 'anthropic',
    type: 'Anthropic.MessageCreateParams',
    bodies: variants([
      { responseFormat: JSON_SCHEMA },
      { thinkingBudget: 2048, temperature: 1 },
      withReasoning(conversation(false, { thinkingBudget: 2048 })),
    ]).map(anthropic.toWire),
  },
  {
    name: 'openai',
    type: 'OpenAI.Chat.ChatCompletionCreateParams',
    bodies: variants([
      { responseFormat: { type: 'json_object' } },
      { responseFormat: JSON_SCHEMA },
      { reasoningEffort: 'low' },
    ]).map(openai.toWire),
  },
  {
    name: 'responses',
    type: 'OpenAI.Responses.ResponseCreateParams',
    bodies: variants([
      { responseFormat: { type: 'json_object' } },
      { responseFormat: JSON_SCHEMA },
      { reasoningEffort: 'high' },
    ]).map(responses.toWire),
  },
  {
    name: 'ollama',
    type: 'OllamaChatRequest',
    bodies: variants([{ responseFormat: { type: 'json_object' } }, { responseFormat: JSON_SCHEMA }]).map(
      ollama.toWire,
    ),
  },
  {
    name: 'google',
    type: 'GeminiRest',
    bodies: variants([
      { responseFormat: { type: 'json_object' }, tools: [] },
      { responseFormat: JSON_SCHEMA, tools: [] },
      { thinkingBudget: 1024 },
    ]).map(google.toWire),
  },
];

const dir = path.resolve('node_modules/.cache/axe-sdk-types', String(process.pid));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function typeErrors(source: string): string[] {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'bodies.ts');
  writeFileSync(file, source);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : 0;
    return `line ${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

describe('request bodies against the official SDK types', () => {
  it('every wire, every variant, type-checks', () => {
    const lines = [
      "import type Anthropic from '@anthropic-ai/sdk';",
      "import type OpenAI from 'openai';",
      "import type { ChatRequest as OllamaChatRequest } from 'ollama';",
      "import type * as genai from '@google/genai';",
      GEMINI_REST,
      ...wires.flatMap((wire) =>
        wire.bodies.map(
          (body, i) => `export const ${wire.name}_${i}: ${wire.type} = ${JSON.stringify(body)};`,
        ),
      ),
      // The check bites: a field no API defines fails on every wire.
      ...wires.map(
        (wire) => `export const ${wire.name}_bad: ${wire.type} = { ...${wire.name}_0, no_such_field: 1 };`,
      ),
    ];
    const errors = typeErrors(lines.join('\n'));
    const unexpected = errors.filter((e) => !e.includes('no_such_field'));
    expect(unexpected).toEqual([]);
    expect(errors.filter((e) => e.includes('no_such_field'))).toHaveLength(wires.length);
  }, 60_000);
});
