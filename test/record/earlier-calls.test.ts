import { describe, expect, it } from 'vitest';
import { callsBefore } from '../../internal/delegation/child-context.js';
import { emptyUsage, type Message } from '../../internal/provider/types.js';
import { earlierCalls } from '../../internal/record/pick-up.js';
import type { RunRecord, TranscriptLine } from '../../internal/record/record.js';
import type { LoadedRun } from '../../internal/record/store.js';
import { TreeBuilder } from '../../internal/record/tree.js';
import type { RunContext } from '../../internal/runner/context.js';
import type { RunEventBody } from '../../internal/runner/events.js';

/**
 * `--resume` / `--continue`: the call numbers a recorded run used (its tree, and the agent_ids its
 * top-level conversation holds) and its finished sub-agents' conversations, for the run that
 * picks it up.
 */
const usage = { ...emptyUsage(), inputTokens: 1, outputTokens: 1 };

function line(path: string, body: RunEventBody): TranscriptLine {
  const depth = path.split('/').length - 1;
  const agent = path.slice(path.lastIndexOf(':') + 1) || path;
  const parent = depth > 0 ? { parent: path.slice(0, path.lastIndexOf('/')) } : {};
  return { path, agent, depth, time: 1, ...parent, ...body } as TranscriptLine;
}

const end: RunEventBody = {
  type: 'agent.end',
  status: 'completed',
  durationMs: 1,
  usage,
  chars: 2,
  content: 'ok',
  turns: 1,
  toolCalls: 0,
};

/** A sub-agent's transcript: started by call `callId`, its messages, and its end unless `running`. */
function agent(path: string, callId: string, messages: Message[], running = false): TranscriptLine[] {
  return [
    line(path, { type: 'agent.start', model: 'm', task: 't', callId }),
    ...messages.map((message) => line(path, { type: 'message', message })),
    ...(running ? [] : [line(path, end)]),
  ];
}

function run(lead: Message[], children: TranscriptLine[][]): LoadedRun {
  const transcripts = new Map<string, TranscriptLine[]>([
    [
      'agents/0000-lead.jsonl',
      [
        line('lead', { type: 'agent.start', model: 'm', task: 'go' }),
        ...lead.map((message) => line('lead', { type: 'message', message })),
      ],
    ],
    ...children.map((lines, i): [string, TranscriptLine[]] => [`agents/000${i + 1}-x.jsonl`, lines]),
  ]);
  const builder = new TreeBuilder();
  for (const [file, lines] of transcripts) for (const l of lines) builder.observe(l, file);
  const record = { id: 'r', status: 'timeout' } as RunRecord;
  return { record, tree: builder.roots[0], agents: builder.all(), transcripts, interrupted: false };
}

const user = (content: string): Message => ({ role: 'user', content });
const assistant = (content: string): Message => ({ role: 'assistant', content });
const result = (id: string): Message => ({
  role: 'tool',
  results: [{ callId: 'c0', name: 'call_agent', content: JSON.stringify({ agent_id: id }), isError: false }],
});

describe('earlierCalls', () => {
  it('numbers: the highest per tool, from the tree and from agent_ids in the conversation', () => {
    const lead = [user('go'), result('lead/call_agent#7:helper'), result('other/delegate_task#9.0:x')];
    const picked = run(lead, [
      agent('lead/call_agent#3:helper', 'c1', [user('Task: a')]),
      agent('lead/spawn_agents#2.4:lead', 'c2', [user('b')]),
      agent('lead/delegate_task#5.0:helper', 'c3', [user('Task: c')], true),
    ]);
    expect(earlierCalls(picked, lead).numbers).toEqual({
      call_agent: 7,
      spawn_agents: 2,
      delegate_task: 5,
    });
  });

  it('conversations: every finished sub-agent with messages, nested ones too, by agent_id', () => {
    const a = [user('Task: a'), assistant('did a')];
    const nested = [user('Task: n'), assistant('did n')];
    const picked = run(
      [user('go')],
      [
        agent('lead/call_agent#1:helper', 'c1', a),
        agent('lead/call_agent#1:helper/call_agent#1:deep', 'd1', nested),
        agent('lead/call_agent#2:helper', 'c2', [user('Task: hung')], true),
        agent('lead/call_agent#3:helper', 'c3', []),
      ],
    );
    const { conversations } = earlierCalls(picked, [user('go')]);
    expect([...conversations.keys()]).toEqual([
      'lead/call_agent#1:helper',
      'lead/call_agent#1:helper/call_agent#1:deep',
    ]);
    expect(conversations.get('lead/call_agent#1:helper')).toEqual({ agent: 'helper', messages: a });
    expect(conversations.get('lead/call_agent#1:helper/call_agent#1:deep')).toEqual({
      agent: 'deep',
      messages: nested,
    });
  });

  it('a run without a tree leaves nothing', () => {
    const picked = {
      record: {} as RunRecord,
      tree: undefined,
      agents: [],
      transcripts: new Map(),
      interrupted: false,
    };
    expect(earlierCalls(picked, [])).toEqual({ numbers: {}, conversations: new Map() });
  });
});

describe('callsBefore', () => {
  const earlier = { numbers: { call_agent: 4, spawn_agents: 2 }, conversations: new Map() };
  const ctx = (prior: RunContext['prior']) => ({ prior }) as RunContext;

  it('a picked-up or continued conversation: the numbers it holds; else 0', () => {
    expect(callsBefore(ctx({ kind: 'pick-up', messages: [], earlier }), 'call_agent')).toBe(4);
    expect(callsBefore(ctx({ kind: 'follow', messages: [], earlier }), 'spawn_agents')).toBe(2);
    expect(callsBefore(ctx({ kind: 'follow', messages: [], earlier }), 'delegate_task')).toBe(0);
    // call_agent's `resume` (follow, nothing earlier), a fork, no prior: a sub-agent numbers from 1.
    expect(callsBefore(ctx({ kind: 'follow', messages: [] }), 'call_agent')).toBe(0);
    expect(callsBefore(ctx({ kind: 'fork', messages: [], provider: 'p' }), 'call_agent')).toBe(0);
    expect(callsBefore(ctx(undefined), 'call_agent')).toBe(0);
  });
});
