import type { Usage } from '../provider/types.js';
import type { RecordedAgent, RecordStatus, TranscriptLine } from './record.js';
import type { LoadedRun } from './store.js';

/**
 * What the HTML trace shows, computed from a loaded run: the agents in tree order with their
 * tool calls, placed in time, and each agent's transcript as the page's panel tells it.
 */

/** An agent's or a tool call's outcome; `interrupted`: still running when its run stopped. */
export type BarStatus = RecordStatus | 'interrupted';

export interface TraceTool {
  callId: string;
  name: string;
  start: number;
  end: number;
  status: BarStatus;
  /** Its lane in the agent's row: parallel calls are stacked. */
  lane: number;
  /** The paths of the sub-agents it started (`spawn_agents` and `delegate_task` start several). */
  children: string[];
}

export interface TraceAgent {
  node: RecordedAgent;
  /** Its caller's path. */
  parent?: string;
  status: BarStatus;
  start: number;
  end: number;
  /** The caller's tool call that started it. */
  via?: TraceTool;
  tools: TraceTool[];
  lanes: number;
}

export interface TraceModel {
  t0: number;
  t1: number;
  /** Depth first, callers before their sub-agents. */
  agents: TraceAgent[];
}

/** More parallel calls than this share the last lane. */
const MAX_LANES = 6;

export function traceModel(run: LoadedRun): TraceModel {
  const ended = run.record.status !== 'running' || run.interrupted;
  const stopped = (status: RecordStatus): BarStatus =>
    status === 'running' && ended ? 'interrupted' : status;
  const started = Date.parse(run.record.startedAt);
  const t0 = run.agents.reduce((min, a) => Math.min(min, a.startedAt), started);
  const endedAt = run.record.endedAt ? Date.parse(run.record.endedAt) : t0;
  const t1 = Math.max(t0 + 1, endedAt, ...[...run.transcripts.values()].map(lastTime));

  const byPath = new Map<string, TraceAgent>();
  for (const node of run.agents) {
    const own = run.transcripts.get(node.transcript) ?? [];
    const end = node.endedAt ?? Math.max(node.startedAt, lastTime(own));
    const status = stopped(node.status);
    const tools = toolsOf(own, end, status === 'interrupted' ? 'interrupted' : 'running');
    byPath.set(node.path, { node, status, start: node.startedAt, end, tools, lanes: stack(tools) });
  }
  const agents: TraceAgent[] = [];
  const visited = new Set<string>();
  const visit = (node: RecordedAgent, parent?: TraceAgent): void => {
    const agent = byPath.get(node.path);
    if (!agent || visited.has(node.path)) return;
    visited.add(node.path);
    if (parent) {
      agent.parent = parent.node.path;
      const via = parent.tools.find((t) => t.callId === node.callId);
      if (via) {
        via.children.push(node.path);
        agent.via = via;
      }
    }
    agents.push(agent);
    for (const child of node.children) visit(child, agent);
  };
  if (run.tree) visit(run.tree);
  for (const node of run.agents) visit(node);
  return { t0, t1, agents };
}

function lastTime(lines: TranscriptLine[]): number {
  return lines.reduce((max, line) => Math.max(max, line.time), 0);
}

/** An agent's tool calls from its `tool.start` / `tool.end` lines, in start order. */
function toolsOf(lines: TranscriptLine[], agentEnd: number, unfinished: BarStatus): TraceTool[] {
  const tools = new Map<string, TraceTool>();
  for (const line of lines) {
    if (line.type === 'tool.start') {
      tools.set(line.callId, {
        callId: line.callId,
        name: line.name,
        start: line.time,
        end: agentEnd,
        status: unfinished,
        lane: 0,
        children: [],
      });
    } else if (line.type === 'tool.end') {
      const tool = tools.get(line.callId);
      const end = { end: line.time, status: line.isError ? 'error' : 'completed' } as const;
      if (tool) Object.assign(tool, end);
      else
        tools.set(line.callId, {
          callId: line.callId,
          name: line.name,
          start: line.time - line.durationMs,
          lane: 0,
          children: [],
          ...end,
        });
    }
  }
  return [...tools.values()].sort((a, b) => a.start - b.start);
}

/** Gives each call the first lane free at its start; the number of lanes used. */
function stack(tools: TraceTool[]): number {
  const lanesEnd: number[] = [];
  for (const tool of tools) {
    let lane = lanesEnd.findIndex((end) => end <= tool.start);
    if (lane === -1) lane = lanesEnd.length < MAX_LANES ? lanesEnd.length : MAX_LANES - 1;
    tool.lane = lane;
    lanesEnd[lane] = Math.max(lanesEnd[lane] ?? 0, tool.end);
  }
  return lanesEnd.length;
}

export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} m ${String(s % 60).padStart(2, '0')} s`;
}

export function formatTokens(usage: Usage): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const cache =
    usage.cacheReadTokens + usage.cacheWriteTokens > 0
      ? `; cache ${n(usage.cacheReadTokens)} read, ${n(usage.cacheWriteTokens)} written`
      : '';
  return `${n(usage.inputTokens + usage.outputTokens)} tokens (${n(usage.inputTokens)} in, ${n(usage.outputTokens)} out${cache})`;
}

export function formatCost(cost: number | undefined): string {
  if (cost === undefined) return '';
  return `$${cost < 1 ? cost.toFixed(4) : cost.toFixed(2)}`;
}
