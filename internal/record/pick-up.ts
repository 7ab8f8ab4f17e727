import type { Message } from '../provider/types.js';
import { reuseKey, splitPath } from '../runner/agent-path.js';
import type { AgentRunResult } from '../runner/types.js';
import type { RecordedAgent, TranscriptLine } from './record.js';
import type { LoadedRun } from './store.js';

/** The top-level agent's conversation as its transcript recorded it. */
export function recordedConversation(run: LoadedRun): Message[] {
  const lines = run.tree ? (run.transcripts.get(run.tree.transcript) ?? []) : [];
  return lines.flatMap((line) => (line.type === 'message' ? [line.message] : []));
}

/**
 * `--resume`: the children of the top-level agent that completed while its last turn's calls were
 * still unanswered, as results that stand in for running them again (by `reuseKey`). Their own
 * children are not in the tree of the new run: their answer is.
 */
export function completedChildren(
  run: LoadedRun,
  conversation: readonly Message[],
): Map<string, AgentRunResult> {
  const reuse = new Map<string, AgentRunResult>();
  const last = conversation.at(-1);
  if (!run.tree || last?.role !== 'assistant' || !last.toolCalls) return reuse;
  const unanswered = new Set(last.toolCalls.map((call) => call.id));
  for (const child of run.tree.children) {
    if (child.status !== 'completed' || child.callId === undefined || !unanswered.has(child.callId)) continue;
    const end = (run.transcripts.get(child.transcript) ?? []).find(isAgentEnd);
    if (!end) continue;
    const { step = '', agent } = splitPath(child.path);
    reuse.set(reuseKey(run.tree.path, child.callId, step, agent), resultOf(child, end));
  }
  return reuse;
}

type AgentEnd = Extract<TranscriptLine, { type: 'agent.end' }>;

function isAgentEnd(line: TranscriptLine): line is AgentEnd {
  return line.type === 'agent.end';
}

function resultOf(node: RecordedAgent, end: AgentEnd): AgentRunResult {
  return {
    agent: node.agent,
    path: node.path,
    depth: node.depth,
    status: 'completed',
    content: end.content,
    ...(end.output !== undefined ? { output: end.output } : {}),
    model: node.model,
    stopReason: '',
    usage: end.usage,
    ...(end.cost !== undefined ? { cost: end.cost } : {}),
    retries: 0,
    turns: end.turns,
    durationMs: end.durationMs,
    toolCalls: end.toolCalls,
    toolCallDetails: [],
    filesRead: [],
    filesModified: [],
    children: [],
  };
}
