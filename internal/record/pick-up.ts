import type { Message } from '../provider/types.js';
import { reuseKey, splitPath } from '../runner/agent-path.js';
import type { AgentRunResult, EarlierCalls } from '../runner/types.js';
import { CALL_AGENT_TOOL_NAME, DELEGATE_TASK_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME } from '../tools/types.js';
import type { RecordedAgent, TranscriptLine } from './record.js';
import type { LoadedRun } from './store.js';

/** The top-level agent's conversation as its transcript recorded it. */
export function recordedConversation(run: LoadedRun): Message[] {
  return messagesOf(topLines(run));
}

function messagesOf(lines: readonly TranscriptLine[]): Message[] {
  return lines.flatMap((line) => (line.type === 'message' ? [line.message] : []));
}

function topLines(run: LoadedRun): TranscriptLine[] {
  return run.tree ? (run.transcripts.get(run.tree.transcript) ?? []) : [];
}

/** How Ctrl-C (`cancelled`) and the run's deadline (`timeout`) end the agents they stop. */
const STOPPED: ReadonlySet<string> = new Set(['cancelled', 'timeout']);

/**
 * `--resume`: the top-level conversation to pick up. Ctrl-C or the run's deadline, arriving while
 * the last turn's calls ran, still leaves a tool message with every call answered — the stopped
 * ones as failures ("interrupted by SIGINT", "timeout after 2s"). That message is not the turn's
 * answer: it is left out, so the turn's calls run again (the sub-agents that completed are
 * reused, `completedChildren`). A tool message after which a model turn started was complete
 * when the run stopped: it stands, and that model turn is the one sent again.
 */
export function resumedConversation(run: LoadedRun): Message[] {
  const messages = recordedConversation(run);
  const [asked, answered] = messages.slice(-2);
  if (asked?.role !== 'assistant' || !asked.toolCalls?.length || answered?.role !== 'tool') return messages;
  const lines = topLines(run);
  const told = lines.findLastIndex((line) => line.type === 'message');
  if (lines.slice(told + 1).some((line) => line.type === 'turn.start')) return messages;
  return stoppedInCalls(run, asked.toolCalls) ? messages.slice(0, -1) : messages;
}

/**
 * Whether Ctrl-C or the deadline stopped the run while these calls ran: the top-level agent ended
 * so (its transcript, or `run.json`), or — a second Ctrl-C exits before that is written — one of
 * the sub-agents the calls started was cancelled.
 */
function stoppedInCalls(run: LoadedRun, calls: readonly { id: string }[]): boolean {
  if (STOPPED.has(run.tree?.status ?? '') || STOPPED.has(run.record.status)) return true;
  const ids = new Set(calls.map((call) => call.id));
  return (run.tree?.children ?? []).some(
    (child) => child.status === 'cancelled' && child.callId !== undefined && ids.has(child.callId),
  );
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

/** The tools whose calls number the sub-agents they start: `lead/call_agent#3:helper`, `lead/spawn_agents#2.1:lead`. */
const NUMBERED: readonly string[] = [CALL_AGENT_TOOL_NAME, SPAWN_AGENTS_TOOL_NAME, DELEGATE_TASK_TOOL_NAME];

/**
 * `--resume`, `--continue`: what the new run's top-level agent, picking up `conversation`, keeps of
 * the recorded run's sub-agents — the highest number each tool gave its calls, in the tree or in
 * an agent_id the conversation holds (one a run before that gave, for a chain of runs), and the
 * conversations of the sub-agents that finished, by agent_id.
 */
export function earlierCalls(run: LoadedRun, conversation: readonly Message[]): EarlierCalls {
  const numbers: Record<string, number> = {};
  const conversations = new Map<string, { agent: string; messages: Message[] }>();
  const root = run.tree;
  if (!root) return { numbers, conversations };
  const note = (tool: string, number: number) => {
    if (NUMBERED.includes(tool) && number > (numbers[tool] ?? 0)) numbers[tool] = number;
  };
  for (const child of root.children) {
    const step = /^([a-z_]+)#(\d+)/.exec(splitPath(child.path).step ?? '');
    if (step) note(step[1] as string, Number(step[2]));
  }
  const ids = new RegExp(`${escapeRegExp(root.path)}/([a-z_]+)#(\\d+)`, 'g');
  for (const [, tool, number] of JSON.stringify(conversation).matchAll(ids))
    note(tool as string, Number(number));
  const finished = (node: RecordedAgent) => {
    for (const child of node.children) {
      const lines = run.transcripts.get(child.transcript) ?? [];
      const messages = messagesOf(lines);
      if (messages.length > 0 && lines.some(isAgentEnd)) {
        conversations.set(child.path, { agent: child.agent, messages });
      }
      finished(child);
    }
  };
  finished(root);
  return { numbers, conversations };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
