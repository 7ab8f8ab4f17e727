import { formatCost, formatMs, formatTokens, type TraceAgent, type TraceModel } from './html-trace-model.js';
import type { TranscriptLine } from './record.js';

/**
 * The data the page's panel renders an agent's transcript from, embedded in the page as JSON.
 * Strings only, formatted here, so the client script only places text.
 */

export type PanelEntry =
  | { kind: 'system'; at: string; text: string; tools: string[] }
  | { kind: 'user'; at: string; text: string }
  | { kind: 'assistant'; at: string; text: string; calls: PanelCall[] }
  | { kind: 'result'; at: string; callId: string; name: string; text: string; error: boolean }
  | { kind: 'warning' | 'retry' | 'notice' | 'mcp' | 'end'; at: string; text: string };

export interface PanelCall {
  callId: string;
  name: string;
  input: string;
  /** The sub-agents it started. */
  children: string[];
}

export interface PanelAgent {
  path: string;
  agent: string;
  status: string;
  /** One line each: model, duration, tokens and cost, turns and tool calls. */
  facts: string[];
  task: string;
  error?: string;
  /** The caller's path and tool call. */
  caller?: { path: string; callId: string; name: string };
  entries: PanelEntry[];
}

/** The most characters of one text shown; the rest is said, not embedded. */
const TEXT_MAX = 20_000;

export function panelData(model: TraceModel, transcripts: Map<string, TranscriptLine[]>): PanelAgent[] {
  return model.agents.map((agent) => panelAgent(agent, model, transcripts.get(agent.node.transcript) ?? []));
}

function panelAgent(agent: TraceAgent, model: TraceModel, lines: TranscriptLine[]): PanelAgent {
  const { node } = agent;
  const children = new Map(agent.tools.map((t) => [t.callId, t.children]));
  const at = (time: number) => `+${formatMs(Math.max(0, time - model.t0))}`;
  const facts = [
    node.model,
    `${formatMs(agent.end - agent.start)} from ${at(agent.start)}`,
    [formatTokens(node.usage), formatCost(node.cost)].filter(Boolean).join(' · '),
    `${node.turns} turns, ${node.toolCalls} tool calls`,
  ].filter(Boolean);
  const entries = lines.flatMap((line) => entriesOf(line, at(line.time), children));
  return {
    path: node.path,
    agent: node.agent,
    status: agent.status,
    facts,
    task: clip(node.task),
    ...(node.error !== undefined ? { error: clip(node.error) } : {}),
    ...(agent.parent !== undefined && agent.via
      ? { caller: { path: agent.parent, callId: agent.via.callId, name: agent.via.name } }
      : {}),
    entries,
  };
}

function entriesOf(line: TranscriptLine, at: string, children: Map<string, string[]>): PanelEntry[] {
  switch (line.type) {
    case 'agent.ready':
      return [{ kind: 'system', at, text: clip(line.system), tools: line.toolNames }];
    case 'message': {
      const { message } = line;
      if (message.role === 'user') return [{ kind: 'user', at, text: clip(message.content) }];
      if (message.role === 'assistant') {
        const calls = (message.toolCalls ?? []).map((call) => ({
          callId: call.id,
          name: call.name,
          input: clip(JSON.stringify(call.arguments, null, 2)),
          children: children.get(call.id) ?? [],
        }));
        return [{ kind: 'assistant', at, text: clip(message.content), calls }];
      }
      return message.results.map((r) => ({
        kind: 'result' as const,
        at,
        callId: r.callId,
        name: r.name,
        text: clip(r.content),
        error: r.isError,
      }));
    }
    case 'retry':
      return [
        { kind: 'retry', at, text: `attempt ${line.attempt} in ${formatMs(line.delayMs)}: ${line.reason}` },
      ];
    case 'warning':
    case 'notice':
      return [{ kind: line.type, at, text: clip(line.message) }];
    case 'mcp':
      return [{ kind: 'mcp', at, text: clip(`${line.server}: ${line.message}`) }];
    case 'agent.end':
      return [{ kind: 'end', at, text: `${line.status}${line.error ? `: ${clip(line.error)}` : ''}` }];
    default:
      return [];
  }
}

function clip(text: string): string {
  if (text.length <= TEXT_MAX) return text;
  return `${text.slice(0, TEXT_MAX)}\n… (${(text.length - TEXT_MAX).toLocaleString('en-US')} more characters not shown)`;
}
