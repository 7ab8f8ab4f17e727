import { describe, expect, it } from 'vitest';
import { emptyUsage, type Message } from '../../internal/provider/types.js';
import { completedChildren, resumedConversation } from '../../internal/record/pick-up.js';
import type { RecordStatus, RunRecord, TranscriptLine } from '../../internal/record/record.js';
import type { LoadedRun } from '../../internal/record/store.js';
import { TreeBuilder } from '../../internal/record/tree.js';
import type { AgentStatus, RunEventBody } from '../../internal/runner/events.js';

/**
 * `--resume` reads from the record whether the last tool message of the top-level agent answers
 * its turn, or only says how Ctrl-C / the deadline stopped the calls (then they run again).
 */
const LEAD = 'lead';
const A = 'lead/call_agent#1:worker';
const B = 'lead/call_agent#2:worker';
const calls = [
  { id: 'c1', name: 'call_agent', arguments: { agent: 'worker', task: 'a' } },
  { id: 'c2', name: 'call_agent', arguments: { agent: 'worker', task: 'slow' } },
];
const asked: Message = { role: 'assistant', content: '', toolCalls: calls };
const answered: Message = {
  role: 'tool',
  results: [
    { callId: 'c1', name: 'call_agent', content: 'done a', isError: false },
    { callId: 'c2', name: 'call_agent', content: 'Error: sub-agent "worker" failed', isError: true },
  ],
};
const usage = { ...emptyUsage(), inputTokens: 1, outputTokens: 1 };

function line(path: string, body: RunEventBody): TranscriptLine {
  const depth = path === LEAD ? 0 : 1;
  return { path, agent: path === LEAD ? 'lead' : 'worker', depth, time: 1, ...body } as TranscriptLine;
}

const end = (status: AgentStatus): RunEventBody => ({
  type: 'agent.end',
  status,
  durationMs: 1,
  usage,
  chars: 0,
  content: status === 'completed' ? 'done a' : '',
  turns: 1,
  toolCalls: 0,
});

function child(path: string, callId: string, status: AgentStatus | undefined): TranscriptLine[] {
  return [
    line(path, { type: 'agent.start', model: 'm', task: 't', callId }),
    ...(status ? [line(path, end(status))] : []),
  ];
}

/** A run whose lead asked for two calls; `after` follows its messages; `children` their ends. */
function run(options: {
  status: RecordStatus;
  after?: RunEventBody[];
  told?: Message[];
  children?: [AgentStatus | undefined, AgentStatus | undefined];
}): LoadedRun {
  const told = options.told ?? [asked, answered];
  const lead = [
    line(LEAD, { type: 'agent.start', model: 'm', task: 'go' }),
    line(LEAD, { type: 'message', message: { role: 'user', content: 'go' } }),
    line(LEAD, { type: 'turn.start', turn: 1, messages: 1, pendingToolCalls: 0 }),
    ...told.map((message) => line(LEAD, { type: 'message', message })),
    ...(options.after ?? []).map((body) => line(LEAD, body)),
  ];
  const [first, second] = options.children ?? ['completed', 'cancelled'];
  const transcripts = new Map<string, TranscriptLine[]>([
    ['agents/0000-lead.jsonl', lead],
    ['agents/0001-worker.jsonl', child(A, 'c1', first)],
    ['agents/0002-worker.jsonl', child(B, 'c2', second)],
  ]);
  const builder = new TreeBuilder();
  for (const [file, lines] of transcripts) for (const l of lines) builder.observe(l, file);
  const record = { id: 'r', status: options.status } as RunRecord;
  return { record, tree: builder.roots[0], agents: builder.all(), transcripts, interrupted: false };
}

const roles = (messages: Message[]) => messages.map((m) => m.role);

describe('resumedConversation', () => {
  it('Ctrl-C or the deadline during the calls: the tool message is left out, completed sub-agents reused', () => {
    for (const status of ['cancelled', 'timeout'] as const) {
      const picked = run({ status, after: [end(status)], children: ['completed', status] });
      const messages = resumedConversation(picked);
      expect(roles(messages)).toEqual(['user', 'assistant']);
      expect([...completedChildren(picked, messages).values()].map((r) => r.path)).toEqual([A]);
    }
  });

  it('the same, told by run.json alone (the transcript lacks the end) or by a cancelled sub-agent alone', () => {
    expect(
      roles(resumedConversation(run({ status: 'timeout', children: ['completed', 'timeout'] }))),
    ).toEqual(['user', 'assistant']);
    // A second Ctrl-C: the process exited before the lead's end or run.json's was written.
    expect(roles(resumedConversation(run({ status: 'running' })))).toEqual(['user', 'assistant']);
  });

  it('a model turn had started after the tool message: it stands (that turn is redone)', () => {
    const after: RunEventBody[] = [{ type: 'turn.start', turn: 2, messages: 3, pendingToolCalls: 2 }];
    for (const status of ['cancelled', 'timeout', 'error', 'running'] as const) {
      const picked = run({ status, after: [...after, ...(status === 'running' ? [] : [end(status)])] });
      expect(roles(resumedConversation(picked)), status).toEqual(['user', 'assistant', 'tool']);
      expect(completedChildren(picked, resumedConversation(picked)).size).toBe(0);
    }
  });

  it('no stop by Ctrl-C or the deadline: a complete tool message stands', () => {
    // Killed (SIGKILL) right after the calls answered; a token budget spent before the next turn.
    const killed = run({ status: 'running', children: ['completed', 'completed'] });
    expect(roles(resumedConversation(killed))).toEqual(['user', 'assistant', 'tool']);
    const spent = run({
      status: 'budget_exceeded',
      after: [end('budget_exceeded')],
      children: ['completed', 'error'],
    });
    expect(roles(resumedConversation(spent))).toEqual(['user', 'assistant', 'tool']);
  });

  it('a conversation that does not end in a tool message is as recorded', () => {
    expect(roles(resumedConversation(run({ status: 'cancelled', told: [asked] })))).toEqual([
      'user',
      'assistant',
    ]);
    expect(roles(resumedConversation(run({ status: 'cancelled', told: [] })))).toEqual(['user']);
  });
});
