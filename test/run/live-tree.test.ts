import { describe, expect, it } from 'vitest';
import { type FrameOptions, frame } from '../../internal/output/live-tree.js';
import { LiveTree, progressMode, progressTarget } from '../../internal/output/live-tree-driver.js';
import { TreeBuilder } from '../../internal/record/tree.js';
import type { AgentStatus, RunEvent, RunEventBody } from '../../internal/runner/events.js';

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

function event(path: string, time: number, body: RunEventBody): RunEvent {
  const depth = path.split('/').length - 1;
  const agent =
    path
      .slice(path.lastIndexOf(':') + 1)
      .split('/')
      .at(-1) ?? path;
  return { path, agent: path.includes('/') ? agent : path, depth, time, ...body };
}

const start = (path: string, time = 0) => event(path, time, { type: 'agent.start', model: 'm', task: 't' });
const end = (path: string, status: AgentStatus, time = 1000) =>
  event(path, time, {
    type: 'agent.end',
    status,
    durationMs: time,
    usage: usage(10, 5),
    chars: 1,
    content: 'x',
    turns: 1,
    toolCalls: 0,
  });
const turn = (path: string, n: number, time = 0) =>
  event(path, time, { type: 'turn.start', turn: n, messages: 1, pendingToolCalls: 0 });
const tool = (path: string, callId: string, name: string) =>
  event(path, 0, { type: 'tool.start', turn: 1, callId, name, input: {} });

const ESC = '\x1b';
const STYLE = new RegExp(`${ESC}\\[\\d+m`, 'g');
const plain: FrameOptions = { width: 200, height: 50, now: 2500, color: false };

function tree(events: RunEvent[]): TreeBuilder {
  const state = new TreeBuilder();
  for (const e of events) state.observe(e);
  return state;
}

/** A lead calling three workers: the first done, the second failed, the third still running. */
const fanOut = (): RunEvent[] => [
  turn('lead', 1),
  tool('lead', 'c1', 'call_agent'),
  tool('lead', 'c2', 'call_agent'),
  tool('lead', 'c3', 'call_agent'),
  start('lead/call_agent#1:worker'),
  start('lead/call_agent#2:worker'),
  start('lead/call_agent#3:worker'),
  turn('lead/call_agent#3:worker', 2),
  end('lead/call_agent#1:worker', 'completed'),
  end('lead/call_agent#2:worker', 'error', 1500),
];

describe('live tree frame', () => {
  it('tools in flight: in start order, less each one that ended; none once the agent ended', () => {
    const toolEnd = (callId: string, name: string) =>
      event('lead', 0, {
        type: 'tool.end',
        turn: 1,
        callId,
        name,
        output: '',
        isError: false,
        durationMs: 1,
      });
    const state = tree([
      start('lead'),
      tool('lead', 'c1', 'grep'),
      tool('lead', 'c2', 'read'),
      tool('lead', 'c3', 'grep'),
    ]);
    expect(state.get('lead')?.inTools).toEqual(['grep', 'read', 'grep']);
    state.observe(toolEnd('c1', 'grep'));
    expect(state.get('lead')?.inTools).toEqual(['read', 'grep']);
    state.observe(toolEnd('c2', 'read'));
    state.observe(toolEnd('c3', 'grep'));
    expect(state.get('lead')?.inTools).toBeUndefined();
    state.observe(tool('lead', 'c4', 'write'));
    expect(JSON.parse(JSON.stringify(state.get('lead')))).toMatchObject({ inTools: ['write'] });
    state.observe(end('lead', 'completed'));
    expect(JSON.parse(JSON.stringify(state.get('lead')))).not.toHaveProperty('inTools');
  });

  it('shows every agent indented under its parent, with status, turn, tools, tokens and time', () => {
    const lines = frame(tree(fanOut()).roots, plain);
    expect(lines).toEqual([
      '⠴ lead  turn 1 · call_agent ×3 · 2.5s',
      '  ✓ worker #1  15 tok · 1.0s',
      '  ✗ worker #2  error · 15 tok · 1.5s',
      '  ⠴ worker #3  turn 2 · 2.5s',
    ]);
  });

  it("shows what a call is for beside the child's name when its caller said (call_agent's description)", () => {
    const described = event('lead/call_agent#1:worker', 0, {
      type: 'agent.start',
      model: 'm',
      task: 'a long task text',
      description: 'count the tests',
    });
    expect(frame(tree([described]).roots, plain)).toEqual([
      '⠴ lead  2.5s',
      '  ⠴ worker #1: count the tests  2.5s',
    ]);
  });

  it('creates the top-level node from its first event, without agent.start, and ignores unknown events', () => {
    const unknown = { path: 'lead', agent: 'lead', depth: 0, time: 0, type: 'message', text: 'hi' };
    const state = tree([unknown as unknown as RunEvent, start('lead/call_agent#1:worker')]);
    expect(frame(state.roots, plain)).toEqual(['⠴ lead  2.5s', '  ⠴ worker #1  2.5s']);
    state.observe(end('lead', 'completed', 2000));
    expect(frame(state.roots, plain)[0]).toBe('✓ lead  15 tok · 2.0s');
  });

  it('marks each way an agent can end', () => {
    const statuses: AgentStatus[] = [
      'completed',
      'error',
      'cancelled',
      'timeout',
      'budget_exceeded',
      'max_turns',
    ];
    const events = statuses.flatMap((status, i) => [
      start(`lead/call_agent#${i + 1}:w`),
      end(`lead/call_agent#${i + 1}:w`, status),
    ]);
    const marks = frame(tree(events).roots, plain)
      .slice(1)
      .map((line) => line.trim().split(' ')[0]);
    expect(marks).toEqual(['✓', '✗', '✗', '⏱', '$', '↻']);
  });

  it('spins while running', () => {
    const roots = tree([start('lead')]).roots;
    const glyphs = [0, 100, 200].map((now) => frame(roots, { ...plain, now })[0]?.[0]);
    expect(new Set(glyphs).size).toBe(3);
  });

  it('collapses finished subtrees, then finished siblings, when the terminal is short', () => {
    const events = [
      ...fanOut(),
      start('lead/call_agent#1:worker/call_agent#1:helper'),
      end('lead/call_agent#1:worker/call_agent#1:helper', 'completed'),
    ];
    const state = tree(events);
    expect(frame(state.roots, { ...plain, height: 6 })).toHaveLength(5);
    expect(frame(state.roots, { ...plain, height: 5 })).toEqual([
      '⠴ lead  turn 1 · call_agent ×3 · 2.5s',
      '  ✓ worker #1  15 tok · 1.0s · 1 sub-agent: 1 ✓',
      '  ✗ worker #2  error · 15 tok · 1.5s',
      '  ⠴ worker #3  turn 2 · 2.5s',
    ]);
    expect(frame(state.roots, { ...plain, height: 4 })).toEqual([
      '⠴ lead  turn 1 · call_agent ×3 · 2.5s',
      '  ✗ 3 finished  2 ✓ 1 ✗',
      '  ⠴ worker #3  turn 2 · 2.5s',
    ]);
    expect(frame(state.roots, { ...plain, height: 3 })).toEqual([
      '⠴ lead  turn 1 · call_agent ×3 · 2.5s',
      '… 2 more',
    ]);
  });

  it('colours only with color on', () => {
    const [line] = frame(tree([start('lead')]).roots, { ...plain, color: true });
    expect(line).toBe('\x1b[36m⠴\x1b[0m\x1b[1m lead\x1b[0m\x1b[2m  2.5s\x1b[0m');
    expect(frame(tree([start('lead')]).roots, plain)[0]).not.toContain('\x1b');
  });

  it('cuts every line to one less than the width', () => {
    const lines = frame(tree(fanOut()).roots, { ...plain, width: 20 });
    for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(19);
    expect(lines[0]).toBe('⠴ lead  turn 1 · c…');
    const colored = frame(tree(fanOut()).roots, { ...plain, width: 20, color: true });
    expect(colored[0]?.replace(STYLE, '')).toBe(lines[0]);
  });

  it('counts and cuts characters, not UTF-16 units: a name of emoji is never split inside one', () => {
    const [line] = frame(tree([start('😀😀😀😀😀😀😀😀😀😀')]).roots, { ...plain, width: 8 });
    expect(line).toBe('⠴ 😀😀😀😀…');
    const [whole] = frame(tree([start('😀😀')]).roots, { ...plain, width: 11 });
    expect(whole).toBe('⠴ 😀😀  2.5s');
  });
});

describe('live tree driver', () => {
  it('draws in place, puts lines above the tree, and clears everything at the end', () => {
    let out = '';
    const sink = { write: (text: string) => (out += text) };
    const live = new LiveTree({ stream: sink, size: () => ({ columns: 80, rows: 24 }), color: false });
    live.observe(start('lead'));
    live.draw(0);
    expect(out).toBe('\x1b[?25l\r\x1b[J\x1b[2K⠋ lead  0.0s\n');
    out = '';
    live.draw(0);
    expect(out).toBe(''); // nothing changed
    live.above('Warning: x\n', sink);
    expect(out).toBe('\x1b[1A\r\x1b[JWarning: x\n');
    out = '';
    live.draw(100);
    expect(out).toBe('\r\x1b[J\x1b[2K⠙ lead  0.1s\n');
    out = '';
    live.stop();
    expect(out).toBe('\x1b[1A\r\x1b[J\x1b[?25h');
    out = '';
    live.observe(turn('lead', 1));
    live.draw(200);
    expect(out).toBe('');
  });

  it("shows each running sub-agent's latest streamed line, none once it ended", () => {
    let out = '';
    const sink = { write: (text: string) => (out += text) };
    const live = new LiveTree({ stream: sink, size: () => ({ columns: 80, rows: 24 }), color: false });
    const child = 'lead/spawn_agents#1.1:lead';
    const delta = (path: string, text: string) => event(path, 0, { type: 'text.delta', text });
    live.observe(start('lead'));
    live.observe(delta('lead', 'the lead says this'));
    live.observe(start(child));
    live.observe(delta(child, 'first line\nsecond   li'));
    live.draw(0);
    expect(out).toContain('⠋ lead #1.1  0.0s · “second li”\n');
    expect(out).not.toContain('the lead says');
    live.observe(delta(child, 'ne\n\n'));
    live.draw(0);
    expect(out).toContain('⠋ lead #1.1  0.0s · “second line”\n');
    out = '';
    live.observe(end(child, 'completed', 0));
    live.draw(0);
    expect(out).not.toContain('“');
    live.stop();
  });

  it('waits for a line written above to end before drawing below it', () => {
    let out = '';
    const sink = { write: (text: string) => (out += text) };
    const live = new LiveTree({ stream: sink, size: () => ({ columns: 80, rows: 24 }), color: false });
    live.observe(start('lead'));
    live.above('partial', sink);
    live.draw(0);
    expect(out).toBe('partial');
    live.above(' answer\n', sink);
    live.draw(0);
    expect(out).toContain('⠋ lead');
    live.stop();
  });
  it('stays off the screen while a question is put to the user', async () => {
    let out = '';
    const sink = { write: (text: string) => (out += text) };
    const live = new LiveTree({ stream: sink, size: () => ({ columns: 80, rows: 24 }), color: false });
    live.observe(start('lead'));
    live.draw(0);
    let drawnWhileAsking = '';
    const answer = await live.held(async () => {
      out = '';
      live.draw(100);
      drawnWhileAsking = out;
      return 'yes';
    });
    expect(answer).toBe('yes');
    expect(drawnWhileAsking).toBe('');
    live.draw(200);
    expect(out).toContain('⠹ lead');
    live.stop();
  });
});

describe('--progress', () => {
  const tty = { isTTY: true, columns: 100, rows: 30 } as NodeJS.WriteStream;
  const pipe = {} as NodeJS.WriteStream;

  it('takes never, auto (the default) or always', () => {
    expect(progressMode(undefined)).toBe('auto');
    expect(progressMode('always')).toBe('always');
    expect(() => progressMode('sometimes')).toThrow(
      '--progress: expected never, auto or always, got "sometimes"',
    );
  });

  it('auto: a terminal that is not dumb, without --verbose; NO_COLOR turns colour off', () => {
    const env = { TERM: 'xterm' };
    expect(progressTarget('auto', { verbose: false, stream: tty, env })?.color).toBe(true);
    expect(progressTarget('auto', { verbose: false, stream: tty, env })?.size()).toEqual({
      columns: 100,
      rows: 30,
    });
    expect(
      progressTarget('auto', { verbose: false, stream: tty, env: { ...env, NO_COLOR: '1' } })?.color,
    ).toBe(false);
    expect(progressTarget('auto', { verbose: true, stream: tty, env })).toBeUndefined();
    expect(progressTarget('auto', { verbose: false, stream: pipe, env })).toBeUndefined();
    expect(progressTarget('auto', { verbose: false, stream: tty, env: { TERM: 'dumb' } })).toBeUndefined();
    expect(progressTarget('auto', { verbose: false, stream: tty, env: {} })).toBeUndefined();
    expect(progressTarget('never', { verbose: false, stream: tty, env })).toBeUndefined();
    expect(progressTarget('always', { verbose: false, stream: pipe, env: {} })?.size()).toEqual({
      columns: 80,
      rows: 24,
    });
  });
});
