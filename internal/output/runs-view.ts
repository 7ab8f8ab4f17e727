import { agentDollars, type Pricer, treeDollars } from '../prices/index.js';
import type { Message, Usage } from '../provider/types.js';
import type { RecordedAgent, RunRecord, TranscriptLine } from '../record/record.js';
import { type LoadedRun, shownStatus } from '../record/store.js';
import { splitPath } from '../runner/agent-path.js';
import { maskSecrets } from '../secrets.js';
import { isoTime } from '../time.js';
import { statusGlyph, toolsInFlight } from './agent-marks.js';
import { cacheUsageText } from './cache-usage.js';
import { costText, formatUsd } from './dollars.js';

/** One row of `axe runs list`, also its `--json` form. */
export interface RunRow {
  id: string;
  agent: string;
  started: string;
  duration_ms?: number;
  status: string;
  exit_code?: number;
  tokens?: number;
  cost?: number;
  /** (axe) The tree's dollars at its models' prices, and without caching: when all are priced. */
  cost_usd?: number;
  cost_usd_without_cache?: number;
  /** The run that resumed it (`--resume`): the one to resume now. */
  resumed_by?: string;
}

export function runRow(record: RunRecord, price?: Pricer): RunRow {
  const dollars = price && record.tree ? treeDollars(record.tree, price) : undefined;
  return {
    id: record.id,
    agent: record.request.agent,
    started: record.startedAt,
    ...(record.durationMs !== undefined ? { duration_ms: record.durationMs } : {}),
    status: shownStatus(record),
    ...(record.exitCode !== undefined ? { exit_code: record.exitCode } : {}),
    ...(record.usage ? { tokens: record.usage.total } : {}),
    ...(record.cost !== undefined ? { cost: record.cost } : {}),
    ...(dollars ? { cost_usd: dollars.usd, cost_usd_without_cache: dollars.usdWithoutCache } : {}),
    ...(record.resumedBy !== undefined ? { resumed_by: record.resumedBy } : {}),
  };
}

/** `axe runs list`: a table, newest first. */
export function renderRunList(rows: RunRow[]): string {
  const table = [
    ['ID', 'AGENT', 'STARTED', 'DURATION', 'STATUS', 'TOKENS', 'COST'],
    ...rows.map((row) => [
      row.id,
      row.agent,
      row.started.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
      row.duration_ms !== undefined ? seconds(row.duration_ms) : '-',
      row.status,
      row.tokens !== undefined ? String(row.tokens) : '-',
      row.cost !== undefined
        ? `$${row.cost.toFixed(4)}`
        : row.cost_usd !== undefined
          ? formatUsd(row.cost_usd)
          : '-',
    ]),
  ];
  const widths = table[0]?.map((_, i) => Math.max(...table.map((cells) => (cells[i] ?? '').length))) ?? [];
  return table
    .map(
      (cells) =>
        `${cells
          .map((c, i) => c.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}\n`,
    )
    .join('');
}

/** `axe runs show <id>`: the run, then its tree, each agent with status, duration, tokens, error. */
export function renderRunTree(run: LoadedRun, price?: Pricer): string {
  const { record } = run;
  const dollars = price && run.tree ? treeDollars(run.tree, price) : undefined;
  const status = run.interrupted ? 'interrupted (the process is gone)' : record.status;
  const head = [
    `run ${record.id}: ${record.request.agent}, started ${record.startedAt}`,
    record.durationMs !== undefined ? `, ${seconds(record.durationMs)}` : '',
    `, ${status}`,
    record.exitCode !== undefined ? ` (exit ${record.exitCode})` : '',
    record.usage ? `, ${record.usage.total} tokens${cacheNote(record.usage)}` : '',
    record.cost !== undefined ? `, $${record.cost.toFixed(4)}` : '',
    dollars ? `, ${costText(dollars.usd, dollars.usdWithoutCache)}` : '',
  ].join('');
  const lines = [head];
  if (record.resumedFrom) lines.push(`resumes run ${record.resumedFrom}`);
  if (record.continuedFrom) lines.push(`continues run ${record.continuedFrom}`);
  if (record.resumedBy) lines.push(`resumed by run ${record.resumedBy}`);
  if (record.error) lines.push(`error: ${record.error}`);
  const walk = (node: RecordedAgent, prefix: string, last: boolean, top: boolean): void => {
    const branch = top ? '' : last ? '└─ ' : '├─ ';
    lines.push(`${prefix}${branch}${agentLine(node, run.interrupted, price)}`);
    const next = top ? '' : `${prefix}${last ? '   ' : '│  '}`;
    node.children.forEach((child, i) => {
      walk(child, next, i === node.children.length - 1, false);
    });
  };
  if (run.tree) walk(run.tree, '', true, true);
  return `${maskSecrets(lines.join('\n'))}\n`;
}

function cacheNote(usage: Usage): string {
  const text = cacheUsageText(usage);
  return text === undefined ? '' : ` (${text})`;
}

function agentLine(node: RecordedAgent, interrupted: boolean, price: Pricer | undefined): string {
  const { step, agent } = splitPath(node.path);
  const name = step === undefined ? agent : `${step}:${agent}`;
  const stopped = node.status === 'running' && interrupted;
  const status = stopped ? 'stopped' : node.status;
  const parts = [`${statusGlyph(node.status)} ${name}`, status];
  if (node.durationMs !== undefined) parts.push(seconds(node.durationMs));
  parts.push(`turns ${node.turns || node.lastTurn || 0}`);
  parts.push(`${node.usage.inputTokens + node.usage.outputTokens} tokens${cacheNote(node.usage)}`);
  const dollars = price && agentDollars(node, price);
  if (dollars && dollars.usd > 0) parts.push(formatUsd(dollars.usd));
  if (node.status === 'running') {
    const where = node.lastTurn !== undefined ? `in turn ${node.lastTurn}` : 'before its first turn';
    parts.push(node.inTools ? `${where}, in ${toolsInFlight(node.inTools)}` : where);
  }
  if (node.error) parts.push(node.error);
  return parts.join(' · ');
}

/** `axe runs show <id> --transcript <path>`: one agent's conversation, readable. */
export function renderTranscript(lines: readonly TranscriptLine[]): string {
  const out: string[] = [];
  for (const line of lines) {
    const at = isoTime(new Date(line.time)).slice(11, 23);
    switch (line.type) {
      case 'agent.start':
        out.push(`${at} ── ${line.path} started (${line.model})`);
        break;
      case 'agent.ready':
        out.push(`${at} [system]\n${indent(line.system)}`);
        if (line.toolNames.length > 0) out.push(`${at} [tools] ${line.toolNames.join(', ')}`);
        break;
      case 'message':
        out.push(...messageLines(at, line.message));
        break;
      case 'question':
        out.push(`${at} [question from ${line.from}] ${line.question}\n${indent(line.answer)}`);
        break;
      case 'retry':
        out.push(`${at} [retry ${line.attempt}] in ${line.delayMs} ms: ${line.reason}`);
        break;
      case 'warning':
        out.push(`${at} [warning] ${line.message}`);
        break;
      case 'agent.end':
        out.push(
          `${at} ── ${line.status} in ${seconds(line.durationMs)}, ${line.turns} turns, ${line.usage.inputTokens + line.usage.outputTokens} tokens${line.error ? `: ${line.error}` : ''}`,
        );
        break;
      default:
    }
  }
  return `${maskSecrets(out.join('\n'))}\n`;
}

function messageLines(at: string, message: Message): string[] {
  if (message.role === 'tool') {
    return message.results.map(
      (r) => `${at} [${r.isError ? 'tool error' : 'tool'}: ${r.name} ${r.callId}]\n${indent(r.content)}`,
    );
  }
  const lines = message.content !== '' ? [`${at} [${message.role}]\n${indent(message.content)}`] : [];
  if (message.role === 'assistant') {
    for (const call of message.toolCalls ?? []) {
      lines.push(`${at} [call: ${call.name} ${call.id}] ${JSON.stringify(call.arguments)}`);
    }
  }
  return lines;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}
