import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FORK_BOUNDARY, forkedStart } from '../../internal/delegation/fork.js';
import type { Message, Reasoning, ToolCall } from '../../internal/provider/types.js';
import { portableHistory, resolvedHistory, withoutToolBlocks } from '../../internal/runner/history.js';

/**
 * Random conversations — including ones cut off mid-turn, with results missing, extra or
 * out of place — become ones every API accepts: no tool call without its result, no result
 * without its call, and no tool blocks at all when told as text.
 */
const id = fc.constantFrom('c1', 'c2', 'c3', 'c4');
const call: fc.Arbitrary<ToolCall> = fc.record(
  {
    id,
    name: fc.constantFrom('read_file', 'call_agent'),
    arguments: fc.dictionary(fc.string({ maxLength: 3 }), fc.integer()),
    signature: fc.string({ maxLength: 4 }),
  },
  { requiredKeys: ['id', 'name', 'arguments'] },
);
const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: fc.string({ maxLength: 5 }) }),
  fc.record(
    {
      role: fc.constant('assistant' as const),
      content: fc.string({ maxLength: 5 }),
      toolCalls: fc.uniqueArray(call, { maxLength: 3, selector: (c) => c.id }),
      reasoning: fc.constant<Reasoning[]>([{ type: 'thinking', text: 't', signature: 's' }]),
    },
    { requiredKeys: ['role', 'content'] },
  ),
  fc.record({
    role: fc.constant('tool' as const),
    results: fc.array(
      fc.record({ callId: id, name: fc.constant('read_file'), content: fc.string(), isError: fc.boolean() }),
      { maxLength: 4 },
    ),
  }),
);
const history = fc.array(message, { maxLength: 12 });

function noDanglingCalls(messages: Message[]): void {
  messages.forEach((current, i) => {
    if (current.role === 'assistant' && (current.toolCalls?.length ?? 0) > 0) {
      const next = messages[i + 1];
      expect(next?.role).toBe('tool');
      const answered = next?.role === 'tool' ? next.results.map((r) => r.callId).sort() : [];
      expect(answered).toEqual(current.toolCalls?.map((c) => c.id).sort());
    }
    if (current.role === 'tool') {
      const before = messages[i - 1];
      expect(before?.role === 'assistant' && (before.toolCalls?.length ?? 0) > 0).toBe(true);
    }
  });
}

describe('conversation history', () => {
  it('resolvedHistory leaves no call without its result and keeps every user turn', () => {
    fc.assert(
      fc.property(history, (messages) => {
        const resolved = resolvedHistory(messages);
        noDanglingCalls(resolved);
        const users = (list: Message[]) => list.filter((m) => m.role === 'user');
        expect(users(resolved)).toEqual(users(messages));
      }),
    );
  });

  it("resolvedHistory of a 2000-call turn: each call's first result, in call order", () => {
    const calls = Array.from({ length: 2000 }, (_, i) => ({
      id: `c${i}`,
      name: 'call_agent',
      arguments: {},
    }));
    const results = calls
      .map((c) => ({ callId: c.id, name: c.name, content: `first ${c.id}`, isError: false }))
      .reverse();
    results.push({ callId: 'c5', name: 'call_agent', content: 'second c5', isError: false });
    const resolved = resolvedHistory([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: '', toolCalls: calls },
      { role: 'tool', results },
    ]);
    const last = resolved[2];
    expect(last?.role === 'tool' ? last.results.map((r) => r.content) : []).toEqual(
      calls.map((c) => `first ${c.id}`),
    );
  });

  it('withoutToolBlocks has no tool blocks and no two turns of one role in a row', () => {
    fc.assert(
      fc.property(history, (messages) => {
        const told = withoutToolBlocks(resolvedHistory(messages));
        for (const [i, m] of told.entries()) {
          expect(m.role).not.toBe('tool');
          if (m.role === 'assistant') expect(m.toolCalls ?? []).toEqual([]);
          if (i > 0) expect(told[i - 1]?.role).not.toBe(m.role);
        }
      }),
    );
  });

  it('forkedStart ends with the boundary and the task, with nothing dangling, on any wire', () => {
    fc.assert(
      fc.property(history, fc.boolean(), fc.boolean(), (messages, sameProvider, hasTools) => {
        const start = forkedStart(messages, 'the task', { sameProvider, hasTools });
        noDanglingCalls(start);
        const last = start.at(-1);
        expect(last?.role).toBe('user');
        const text = last?.role === 'user' ? last.content : '';
        expect(text.endsWith(`${FORK_BOUNDARY}\n\nthe task`)).toBe(true);
        if (!sameProvider) expect(JSON.stringify(start)).not.toMatch(/"(reasoning|signature)"/);
        if (!hasTools) expect(start.some((m) => m.role === 'tool')).toBe(false);
      }),
    );
  });

  it('portableHistory drops reasoning and call signatures, nothing else', () => {
    fc.assert(
      fc.property(history, (messages) => {
        const portable = portableHistory(messages);
        expect(JSON.stringify(portable)).not.toMatch(/"(reasoning|signature)"/);
        expect(portable.map((m) => m.role)).toEqual(messages.map((m) => m.role));
      }),
    );
  });
});
