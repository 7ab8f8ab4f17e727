import { describe, expect, it } from 'vitest';
import * as anthropic from '../../internal/provider/anthropic.js';
import * as bedrock from '../../internal/provider/bedrock.js';
import { conversation } from './helpers.js';

/** Where the automatic breakpoints go (prompt-cache.ts), on the two wires that take them. */
const LONG = 'Check every claim against the source and say which line supports it. '.repeat(60);
const EPHEMERAL = { type: 'ephemeral' };

describe('automatic prompt-cache breakpoints', () => {
  it("Anthropic: the system prompt once it may reach the model's minimum; the newest message of a follow-up", () => {
    const body = anthropic.toWire(
      conversation(false, { model: 'claude-sonnet-4-5', system: LONG, promptCaching: 'auto' }),
    );
    expect(body.system).toEqual([{ type: 'text', text: LONG, cache_control: EPHEMERAL }]);
    const messages = body.messages as { content: { cache_control?: unknown }[] }[];
    expect(messages.at(-1)?.content.at(-1)).toMatchObject({ type: 'tool_result', cache_control: EPHEMERAL });
    // One breakpoint on the conversation: the earlier messages are found through the lookback.
    expect(JSON.stringify(messages).split('cache_control').length - 1).toBe(1);
  });

  it('a prompt under the minimum (4,096 tokens for Haiku 4.5) stays a string; a first request marks no message', () => {
    const first = conversation(false, {
      model: 'claude-haiku-4-5',
      system: LONG,
      promptCaching: 'auto',
      messages: [{ role: 'user', content: 'hello' }],
    });
    const body = anthropic.toWire(first);
    expect(body.system).toBe(LONG);
    expect(body.messages).toEqual([{ role: 'user', content: 'hello' }]);
  });

  it('a string message that is the newest of a follow-up becomes one marked text block', () => {
    const request = conversation(false, { promptCaching: 'auto' });
    request.messages.push({ role: 'assistant', content: 'Done.' }, { role: 'user', content: 'And Rome?' });
    const messages = anthropic.toWire(request).messages as unknown[];
    expect(messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: 'And Rome?', cache_control: EPHEMERAL }],
    });
  });

  it('Bedrock: cachePoint blocks for Claude models only', () => {
    const auto = { system: LONG, promptCaching: 'auto' } as const;
    const claude = bedrock.toWire(
      conversation(false, { ...auto, model: 'anthropic.claude-sonnet-4-5-v1:0' }),
    );
    expect(claude.system).toEqual([{ text: LONG }, { cachePoint: { type: 'default' } }]);
    const messages = claude.messages as { content: unknown[] }[];
    expect(messages.at(-1)?.content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    const llama = bedrock.toWire(conversation(false, { ...auto, model: 'meta.llama3-70b-instruct-v1:0' }));
    expect(JSON.stringify(llama)).not.toContain('cachePoint');
  });
});
