import type { AgentStatus, RunEvent } from '../runner/events.js';

/**
 * The live agent tree of `axe run --progress`: the state the event stream builds (one node per
 * agent path) and the frame drawn from it. Pure: no timer, no stream (see live-tree-driver.ts).
 */
export interface TreeNode {
  readonly path: string;
  /** The agent's name, with its call number when it has one: `worker #3`, `spawner #1.2`. */
  readonly label: string;
  status: 'running' | AgentStatus;
  turn: number;
  /** Tool calls in flight: call id → tool name. */
  readonly tools: Map<string, string>;
  retry?: number;
  /** Input + output tokens of the agent's own turns. */
  tokens: number;
  startedAt: number;
  endedAt?: number;
  readonly children: TreeNode[];
}

export class LiveTreeState {
  readonly roots: TreeNode[] = [];
  private readonly nodes = new Map<string, TreeNode>();

  /** Any event names its agent, so a node exists from its first event (agent.start or not). */
  observe(event: RunEvent): void {
    const node = this.node(event.path, event.agent, event.time);
    switch (event.type) {
      case 'agent.start':
        node.startedAt = event.time;
        break;
      case 'turn.start':
        node.turn = event.turn;
        break;
      case 'turn.end':
        node.tokens += event.usage.inputTokens + event.usage.outputTokens;
        node.retry = undefined;
        break;
      case 'tool.start':
        node.tools.set(event.callId, event.name);
        break;
      case 'tool.end':
        node.tools.delete(event.callId);
        break;
      case 'retry':
        node.retry = event.attempt;
        break;
      case 'agent.end':
        node.status = event.status;
        node.endedAt = event.time;
        node.tools.clear();
        node.retry = undefined;
        node.tokens = Math.max(node.tokens, event.usage.inputTokens + event.usage.outputTokens);
        break;
      default:
        break;
    }
  }

  private node(path: string, agent: string, time: number): TreeNode {
    const known = this.nodes.get(path);
    if (known) return known;
    const cut = path.lastIndexOf('/');
    const segment = path.slice(cut + 1);
    const number = /#([\w.]+):/.exec(segment)?.[1];
    const node: TreeNode = {
      path,
      label: number === undefined ? agent : `${agent} #${number}`,
      status: 'running',
      turn: 0,
      tools: new Map(),
      tokens: 0,
      startedAt: time,
      children: [],
    };
    this.nodes.set(path, node);
    if (cut < 0) this.roots.push(node);
    else {
      const parentPath = path.slice(0, cut);
      const parentSegment = parentPath.slice(parentPath.lastIndexOf('/') + 1);
      const parentAgent = parentSegment.slice(parentSegment.indexOf(':') + 1);
      this.node(parentPath, parentAgent, time).children.push(node);
    }
    return node;
  }
}

export interface FrameOptions {
  /** Terminal columns: every line is cut to one less, so none wraps. */
  width: number;
  /** Terminal rows: the frame has fewer lines, so it never scrolls out of reach of cursor-up. */
  height: number;
  now: number;
  color: boolean;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_STEP_MS = 100;

const MARKS: Record<AgentStatus, { glyph: string; color: string }> = {
  completed: { glyph: '✓', color: '32' },
  error: { glyph: '✗', color: '31' },
  cancelled: { glyph: '✗', color: '31' },
  timeout: { glyph: '⏱', color: '33' },
  budget_exceeded: { glyph: '$', color: '33' },
  max_turns: { glyph: '↻', color: '33' },
};

interface Row {
  depth: number;
  glyph: string;
  color: string;
  name: string;
  detail: string;
}

/**
 * The lines of one frame. When the whole tree does not fit in `height - 1` lines, each finished
 * subtree becomes one line; then the finished children of each agent one line together; then
 * the frame is cut, its last line saying how many more there are.
 */
export function frame(roots: readonly TreeNode[], options: FrameOptions): string[] {
  const max = Math.max(1, options.height - 1);
  let rows: Row[] = [];
  for (const level of [0, 1, 2]) {
    rows = layout(roots, 0, level, options.now);
    if (rows.length <= max) break;
  }
  if (rows.length > max) {
    const kept = rows.slice(0, max - 1);
    rows = [
      ...kept,
      { depth: 0, glyph: '…', color: '2', name: `${rows.length - kept.length} more`, detail: '' },
    ];
  }
  return rows.map((row) => render(row, options));
}

function layout(nodes: readonly TreeNode[], depth: number, level: number, now: number): Row[] {
  const rows: Row[] = [];
  const finished = level >= 2 ? nodes.filter(done) : [];
  if (finished.length > 0) rows.push(groupRow(finished, depth));
  for (const node of nodes) {
    if (finished.includes(node)) continue;
    const row = agentRow(node, depth, now);
    if (level >= 1 && node.children.length > 0 && done(node)) {
      const below = descendants(node);
      row.detail = `${row.detail} · ${below.length} sub-agent${below.length === 1 ? '' : 's'}: ${tally(below)}`;
      rows.push(row);
      continue;
    }
    rows.push(row, ...layout(node.children, depth + 1, level, now));
  }
  return rows;
}

function agentRow(node: TreeNode, depth: number, now: number): Row {
  const { status } = node;
  const mark =
    status === 'running'
      ? { glyph: SPINNER[Math.floor(now / SPINNER_STEP_MS) % SPINNER.length] ?? '', color: '36' }
      : MARKS[status];
  const parts: string[] = [];
  if (status !== 'running' && status !== 'completed') parts.push(status);
  if (node.turn > 0) parts.push(`turn ${node.turn}`);
  if (node.tools.size > 0) parts.push(toolsInFlight(node.tools));
  if (node.retry !== undefined) parts.push(`retry ${node.retry}`);
  if (node.tokens > 0) parts.push(tokens(node.tokens));
  parts.push(elapsed((node.endedAt ?? now) - node.startedAt));
  return { depth, ...mark, name: node.label, detail: parts.join(' · ') };
}

function groupRow(nodes: readonly TreeNode[], depth: number): Row {
  const all = nodes.flatMap((node) => [node, ...descendants(node)]);
  const failed = all.some((node) => node.status !== 'completed');
  return {
    depth,
    ...(failed ? MARKS.error : MARKS.completed),
    name: `${all.length} finished`,
    detail: tally(all),
  };
}

/** `28 ✓ 2 ✗`: how many agents ended with each mark. */
function tally(nodes: readonly TreeNode[]): string {
  const counts = new Map<string, number>();
  for (const node of nodes) {
    const glyph = node.status === 'running' ? '…' : MARKS[node.status].glyph;
    counts.set(glyph, (counts.get(glyph) ?? 0) + 1);
  }
  return [...counts].map(([glyph, count]) => `${count} ${glyph}`).join(' ');
}

function done(node: TreeNode): boolean {
  return node.status !== 'running' && node.children.every(done);
}

function descendants(node: TreeNode): TreeNode[] {
  return node.children.flatMap((child) => [child, ...descendants(child)]);
}

function toolsInFlight(tools: ReadonlyMap<string, string>): string {
  const counts = new Map<string, number>();
  for (const name of tools.values()) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, count]) => (count > 1 ? `${name} ×${count}` : name)).join(', ');
}

function tokens(count: number): string {
  if (count < 1000) return `${count} tok`;
  if (count < 1_000_000) return `${(count / 1000).toFixed(1)}k tok`;
  return `${(count / 1_000_000).toFixed(1)}M tok`;
}

function elapsed(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const whole = Math.floor(seconds);
  return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
}

/** One line, cut to `width - 1` characters (the cut marked `…`), coloured unless `color` is off. */
function render(row: Row, options: FrameOptions): string {
  const segments: [text: string, style: string][] = [
    ['  '.repeat(row.depth), ''],
    [row.glyph, row.color],
    [` ${row.name}`, '1'],
    [row.detail === '' ? '' : `  ${row.detail}`, '2'],
  ];
  let room = Math.max(1, options.width - 1);
  let line = '';
  for (const [text, style] of segments) {
    const chars = Array.from(text);
    let shown = chars.length <= room ? text : `${chars.slice(0, Math.max(0, room - 1)).join('')}…`;
    if (room <= 0) shown = '';
    room -= Array.from(shown).length;
    line += options.color && style !== '' && shown !== '' ? `\x1b[${style}m${shown}\x1b[0m` : shown;
    if (chars.length > Array.from(shown).length) break;
  }
  return line;
}
