import type { RecordedAgent } from '../record/record.js';
import { splitPath } from '../runner/agent-path.js';
import { maskSecrets } from '../secrets.js';
import { STATUS_MARKS, statusGlyph, toolsInFlight } from './agent-marks.js';

/*
 * The frame of the live agent tree (`axe run --progress`), drawn from the tree the run's events
 * build (`TreeBuilder`, the one the run record uses too). Pure: no timer, no stream (see
 * live-tree-driver.ts).
 */

export interface FrameOptions {
  /** Terminal columns: every line is cut to one less, so none wraps. */
  width: number;
  /** Terminal rows: the frame has fewer lines, so it never scrolls out of reach of cursor-up. */
  height: number;
  now: number;
  color: boolean;
  /** The end of each streaming sub-agent's text, by path: a running one's latest line is shown. */
  said?: ReadonlyMap<string, string>;
}

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const SPINNER_STEP_MS = 100;

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
export function frame(roots: readonly RecordedAgent[], options: FrameOptions): string[] {
  const max = Math.max(1, options.height - 1);
  let rows: Row[] = [];
  for (const level of [0, 1, 2]) {
    rows = layout(roots, 0, level, options);
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

function layout(nodes: readonly RecordedAgent[], depth: number, level: number, options: FrameOptions): Row[] {
  const rows: Row[] = [];
  const finished = level >= 2 ? nodes.filter(done) : [];
  if (finished.length > 0) rows.push(groupRow(finished, depth));
  // A set: a 512-way fan-out's frame would compare every child with every finished one.
  const grouped = new Set(finished);
  for (const node of nodes) {
    if (grouped.has(node)) continue;
    const row = agentRow(node, depth, options);
    if (level >= 1 && node.children.length > 0 && done(node)) {
      const below = descendants(node);
      row.detail = `${row.detail} · ${below.length} sub-agent${below.length === 1 ? '' : 's'}: ${tally(below)}`;
      rows.push(row);
      continue;
    }
    rows.push(row, ...layout(node.children, depth + 1, level, options));
  }
  return rows;
}

function agentRow(node: RecordedAgent, depth: number, { now, said }: FrameOptions): Row {
  const { status } = node;
  const mark =
    status === 'running'
      ? { glyph: SPINNER[Math.floor(now / SPINNER_STEP_MS) % SPINNER.length] ?? '', color: '36' }
      : STATUS_MARKS[status];
  const parts: string[] = [];
  if (status !== 'running' && status !== 'completed') parts.push(status);
  if (node.lastTurn !== undefined) parts.push(`turn ${node.lastTurn}`);
  if (node.inTools) parts.push(toolsInFlight(node.inTools));
  if (node.retry !== undefined) parts.push(`retry ${node.retry}`);
  const used = node.usage.inputTokens + node.usage.outputTokens;
  if (used > 0) parts.push(tokens(used));
  parts.push(elapsed((node.endedAt ?? now) - node.startedAt));
  // Masked: a row is on the terminal, and the model may echo a key it read.
  const latest = status === 'running' ? maskSecrets(latestLine(said?.get(node.path))) : '';
  if (latest !== '') parts.push(`“${latest}”`);
  return { depth, ...mark, name: label(node), detail: parts.join(' · ') };
}

/** The last line of `text` with anything in it, its spaces collapsed ('' when none). */
function latestLine(text: string | undefined): string {
  if (text === undefined) return '';
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = (lines[i] ?? '').replace(/\s+/g, ' ').trim();
    if (line !== '') return line;
  }
  return '';
}

/**
 * The agent's name, with its call number when it has one (`worker #3`, `spawner #1.2`) and what
 * the call is for when its caller said (`reviewer #2: check the tests`).
 */
function label(node: RecordedAgent): string {
  const { step } = splitPath(node.path);
  const number = step?.slice(step.indexOf('#') + 1);
  const name = number === undefined ? node.agent : `${node.agent} #${number}`;
  return node.description !== undefined ? `${name}: ${node.description}` : name;
}

function groupRow(nodes: readonly RecordedAgent[], depth: number): Row {
  const all = nodes.flatMap((node) => [node, ...descendants(node)]);
  const failed = all.some((node) => node.status !== 'completed');
  return {
    depth,
    ...(failed ? STATUS_MARKS.error : STATUS_MARKS.completed),
    name: `${all.length} finished`,
    detail: tally(all),
  };
}

/** `28 ✓ 2 ✗`: how many agents ended with each mark. */
function tally(nodes: readonly RecordedAgent[]): string {
  const counts = new Map<string, number>();
  for (const node of nodes) {
    const glyph = statusGlyph(node.status);
    counts.set(glyph, (counts.get(glyph) ?? 0) + 1);
  }
  return [...counts].map(([glyph, count]) => `${count} ${glyph}`).join(' ');
}

function done(node: RecordedAgent): boolean {
  return node.status !== 'running' && node.children.every(done);
}

function descendants(node: RecordedAgent): RecordedAgent[] {
  return node.children.flatMap((child) => [child, ...descendants(child)]);
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
    const length = codePoints(text);
    let shown = text;
    let shownLength = length;
    if (room <= 0) {
      shown = '';
      shownLength = 0;
    } else if (length > room) {
      shown = `${firstCodePoints(text, room - 1)}…`;
      shownLength = room;
    }
    room -= shownLength;
    line += options.color && style !== '' && shown !== '' ? `\x1b[${style}m${shown}\x1b[0m` : shown;
    if (length > shownLength) break;
  }
  return line;
}

// A frame is drawn every 100 ms, row by row: splitting every text into code points was most of it.
const SURROGATE = /[\uD800-\uDFFF]/;

/** How many characters (code points) `text` has. */
function codePoints(text: string): number {
  return SURROGATE.test(text) ? Array.from(text).length : text.length;
}

/** The first `count` characters (code points) of `text`. */
function firstCodePoints(text: string, count: number): string {
  return SURROGATE.test(text) ? Array.from(text).slice(0, count).join('') : text.slice(0, count);
}
