import { join } from 'node:path';
import type { Message, Usage } from '../../internal/provider/types.js';
import type { RecordedRequest } from '../../internal/record/record.js';
import { RunRecorder } from '../../internal/record/recorder.js';
import type { AgentStatus, RunEventBody } from '../../internal/runner/events.js';
import { failedBeforeStart } from '../../internal/runner/result.js';
import type { AgentRunResult } from '../../internal/runner/types.js';
import { tempDirForFile } from '../temp-dir.js';

/** Untrusted text that would run script if it reached the page as markup. */
export const HOSTILE = '</script><img src=x onerror=alert(1)>';
/** An agent name that would break out of an attribute. */
export const HOSTILE_AGENT = `tester"><img src=x onerror=alert(2)>`;

export const LEAD = 'lead';
export const SECURITY = 'lead/call_agent#1:security';
export const STYLE = 'lead/call_agent#2:style';
export const TESTER = `lead/call_agent#3:${HOSTILE_AGENT}`;
export const DOCS = 'lead/call_agent#4:docs';

export interface Recorded {
  runsDir: string;
  id: string;
  /** Each agent's path and how it ended. */
  agents: Map<string, AgentStatus | 'running'>;
  /** `<agent path>\n<call id>` of each tool call, and how it ended. */
  tools: Map<string, 'completed' | 'error' | 'running'>;
}

const usage = (input: number, output: number): Usage => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

/** What a run of the lead was asked, as run.json records it. */
export const request: RecordedRequest = {
  agent: LEAD,
  agentFile: '/agents/lead.toml',
  agentDigest: '0'.repeat(64),
  input: 'Review the diff.',
  inputs: {},
  cwd: '/repo',
  agentsDirs: ['/agents'],
  timeoutSeconds: 300,
  stream: false,
};

/** Feeds a real recorder a run's events, each at `ms` after the run started. */
class Script {
  readonly agents = new Map<string, AgentStatus | 'running'>();
  readonly tools = new Map<string, 'completed' | 'error' | 'running'>();

  constructor(
    readonly recorder: RunRecorder,
    readonly t0: number,
  ) {}

  event(ms: number, path: string, body: RunEventBody): void {
    const agent = path.slice(path.lastIndexOf(':') + 1) || path;
    const depth = path.split('/').length - 1;
    this.recorder.observe({
      path,
      agent: path.includes(':') ? agent : path,
      depth,
      time: this.t0 + ms,
      ...body,
    });
  }

  start(ms: number, path: string, task: string, callId?: string): void {
    this.agents.set(path, 'running');
    this.event(ms, path, { type: 'agent.start', model: 'anthropic/claude-x', task, callId });
    this.event(ms + 2, path, {
      type: 'agent.ready',
      model: 'anthropic/claude-x',
      workdir: '/repo',
      files: 0,
      tools: 2,
      system: `You are ${path}.`,
      toolNames: ['read_file', 'call_agent'],
    });
    this.message(ms + 3, path, { role: 'user', content: task });
  }

  message(ms: number, path: string, message: Message): void {
    this.event(ms, path, { type: 'message', message });
  }

  turn(ms: number, path: string, turn: number, text: string, calls: [string, string, object][] = []): void {
    this.event(ms, path, { type: 'turn.start', turn, messages: turn * 2 - 1, pendingToolCalls: 0 });
    const toolCalls = calls.map(([id, name, args]) => ({
      id,
      name,
      arguments: args as Record<string, string>,
    }));
    this.message(ms + 400, path, {
      role: 'assistant',
      content: text,
      ...(calls.length ? { toolCalls } : {}),
    });
    const stopReason = calls.length ? 'tool_use' : 'end_turn';
    this.event(ms + 400, path, {
      type: 'turn.end',
      turn,
      stopReason,
      toolCalls: calls.length,
      usage: usage(900, 120),
    });
  }

  toolStart(ms: number, path: string, turn: number, callId: string, name: string, input: unknown): void {
    this.tools.set(`${path}\n${callId}`, 'running');
    this.event(ms, path, { type: 'tool.start', turn, callId, name, input });
  }

  toolEnd(
    ms: number,
    path: string,
    turn: number,
    callId: string,
    name: string,
    output: string,
    isError = false,
  ) {
    this.tools.set(`${path}\n${callId}`, isError ? 'error' : 'completed');
    const durationMs = 50;
    this.event(ms, path, { type: 'tool.end', turn, callId, name, output, isError, durationMs });
    this.message(ms, path, { role: 'tool', results: [{ callId, name, content: output, isError }] });
  }

  end(ms: number, path: string, status: AgentStatus, started: number, turns: number, error?: string): void {
    this.agents.set(path, status);
    this.event(ms, path, {
      type: 'agent.end',
      status,
      durationMs: ms - started,
      usage: usage(900 * turns, 120 * turns),
      chars: 10,
      content: status === 'completed' ? `${path} is done.` : '',
      turns,
      toolCalls: [...this.tools.keys()].filter((k) => k.startsWith(`${path}\n`)).length,
      cost: 0.0123 * turns,
      ...(error ? { error } : {}),
    });
  }
}

function result(path: string, status: AgentStatus, children: AgentRunResult[] = []): AgentRunResult {
  const agent = path.slice(path.lastIndexOf(':') + 1);
  return {
    ...failedBeforeStart({ agent, path, depth: 0 }, status, '', 1000),
    usage: usage(900, 120),
    children,
  };
}

/** A real recorder of a run of LEAD under `root` (a new temp dir by default); `problem` hears its warnings (default: throws). */
export async function openRecorder(
  root?: string,
  problem: (message: string) => void = (message) => {
    throw new Error(message);
  },
): Promise<{ recorder: RunRecorder; runsDir: string; t0: number }> {
  const runsDir = join(root ?? tempDirForFile('axe-trace-'), 'runs');
  const recorder = await RunRecorder.open(runsDir, request, {}, problem);
  if (!recorder) throw new Error('no recorder');
  return { recorder, runsDir, t0: Date.now() };
}

/**
 * The lead calls three sub-agents in parallel (one completes, one fails, one times out), reads a
 * file meanwhile, then starts a background sub-agent and waits for it with `task_output`.
 */
export async function recordReviewRun(): Promise<Recorded> {
  const { recorder, runsDir, t0 } = await openRecorder();
  const s = new Script(recorder, t0);
  s.start(0, LEAD, 'Review the diff.');
  s.turn(10, LEAD, 1, 'I will have three specialists look at it.', [
    ['c1', 'read_file', { path: 'src/users.ts' }],
    ['c2', 'call_agent', { agent: 'security', task: 'Security review.' }],
    ['c3', 'call_agent', { agent: 'style', task: 'Style review.' }],
    ['c4', 'call_agent', { agent: HOSTILE_AGENT, task: HOSTILE }],
  ]);
  s.toolStart(420, LEAD, 1, 'c1', 'read_file', { path: 'src/users.ts' });
  for (const [id, agent] of [
    ['c2', 'security'],
    ['c3', 'style'],
    ['c4', HOSTILE_AGENT],
  ]) {
    s.toolStart(420, LEAD, 1, id as string, 'call_agent', { agent });
  }
  s.toolEnd(520, LEAD, 1, 'c1', 'read_file', 'export function findUser(name) { … }');

  s.start(430, SECURITY, 'Security review.', 'c2');
  // A turn that only calls tools: its text is empty.
  s.turn(440, SECURITY, 1, '', [['s1', 'grep', { pattern: 'exec(' }]]);
  s.toolStart(850, SECURITY, 1, 's1', 'grep', { pattern: 'exec(' });
  s.toolEnd(1400, SECURITY, 1, 's1', 'grep', 'src/users.ts:21: exec("pg_dump " + format)');
  s.turn(1410, SECURITY, 2, '- HIGH src/users.ts:21 — command injection.');
  s.end(1900, SECURITY, 'completed', 430, 2);

  s.start(430, STYLE, 'Style review.', 'c3');
  s.event(900, STYLE, { type: 'retry', attempt: 1, delayMs: 500, reason: 'HTTP 529 overloaded' });
  s.end(2400, STYLE, 'error', 430, 0, 'provider error: HTTP 500 internal server error');

  s.start(430, TESTER, HOSTILE, 'c4');
  s.turn(440, TESTER, 1, 'Running the tests.', [['t1', 'bash', { command: 'npm test' }]]);
  s.toolStart(850, TESTER, 1, 't1', 'bash', { command: 'npm test' });
  s.toolEnd(3000, TESTER, 1, 't1', 'bash', HOSTILE, true);
  s.event(3010, TESTER, { type: 'warning', message: `tool output ${HOSTILE}` });
  s.end(5000, TESTER, 'timeout', 430, 1, 'timed out after 5 s');

  s.toolEnd(1910, LEAD, 1, 'c2', 'call_agent', '- HIGH src/users.ts:21 — command injection.');
  s.toolEnd(2410, LEAD, 1, 'c3', 'call_agent', 'Error: sub-agent "style" failed', true);
  s.toolEnd(5010, LEAD, 1, 'c4', 'call_agent', `Error: sub-agent failed - ${HOSTILE}`, true);

  s.turn(5020, LEAD, 2, 'Docs next, in the background.', [
    ['c5', 'call_agent', { agent: 'docs', task: 'Update the docs.', run_in_background: 'true' }],
    ['c6', 'task_output', { agent_id: DOCS }],
  ]);
  s.toolStart(5430, LEAD, 2, 'c5', 'call_agent', { agent: 'docs' });
  s.start(5440, DOCS, 'Update the docs.', 'c5');
  s.toolEnd(5450, LEAD, 2, 'c5', 'call_agent', '{"status":"async_launched"}');
  s.toolStart(5460, LEAD, 2, 'c6', 'task_output', { agent_id: DOCS });
  s.turn(5500, DOCS, 1, 'The docs are updated.');
  s.end(8000, DOCS, 'completed', 5440, 1);
  s.toolEnd(8010, LEAD, 2, 'c6', 'task_output', 'The docs are updated.');

  s.turn(8020, LEAD, 3, 'Verdict: request changes.');
  s.end(8500, LEAD, 'completed', 0, 3);
  const outcome = result(LEAD, 'completed', [
    result(SECURITY, 'completed'),
    result(STYLE, 'error'),
    result(TESTER, 'timeout'),
    result(DOCS, 'completed'),
  ]);
  await recorder.finish({ result: outcome, budget: { used: 5100 } }, 0, new Date(t0 + 8600));
  return { runsDir, id: recorder.id, agents: s.agents, tools: s.tools };
}

/** `n` agents: the lead starts `n - 1` sub-agents with one `spawn_agents` call, each with a tool call. */
export async function recordWideRun(n: number): Promise<Recorded> {
  const { recorder, runsDir, t0 } = await openRecorder();
  const s = new Script(recorder, t0);
  s.start(0, LEAD, 'Audit everything.');
  s.toolStart(20, LEAD, 1, 'spawn', 'spawn_agents', { tasks: n - 1 });
  for (let i = 1; i < n; i++) {
    const path = `${LEAD}/spawn_agents#1.${i}:auditor`;
    const at = 30 + i * 7;
    s.start(at, path, `Audit part ${i}.`, 'spawn');
    s.toolStart(at + 10, path, 1, 'r', 'read_file', { path: `part-${i}` });
    s.toolEnd(at + 300, path, 1, 'r', 'read_file', `part ${i}`, i % 10 === 0);
    s.end(at + 400 + (i % 50) * 20, path, i % 25 === 0 ? 'max_turns' : 'completed', at, 1);
  }
  s.toolEnd(30 + n * 7 + 1500, LEAD, 1, 'spawn', 'spawn_agents', 'all done');
  s.end(30 + n * 7 + 1600, LEAD, 'completed', 0, 2);
  await recorder.finish(
    { result: result(LEAD, 'completed'), budget: { used: 0 } },
    0,
    new Date(t0 + n * 7 + 1700),
  );
  return { runsDir, id: recorder.id, agents: s.agents, tools: s.tools };
}

/** A run still going: its lead is in a tool call and never ended (no `finish`). */
export async function recordUnfinishedRun(): Promise<Recorded> {
  const { recorder, runsDir, t0 } = await openRecorder();
  const s = new Script(recorder, t0);
  s.start(0, LEAD, 'Review the diff.');
  s.turn(10, LEAD, 1, 'Reading.', [['c1', 'read_file', { path: 'a' }]]);
  s.toolStart(420, LEAD, 1, 'c1', 'read_file', { path: 'a' });
  await recorder.written();
  return { runsDir, id: recorder.id, agents: s.agents, tools: s.tools };
}
