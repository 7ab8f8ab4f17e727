import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, describe, expect, it } from 'vitest';
import { openEventLog } from '../../internal/output/event-log.js';
import { createRunRenderer } from '../../internal/output/run-renderer.js';
import type { RunEvent, RunEventBody } from '../../internal/runner/events.js';
import type { AgentRunResult } from '../../internal/runner/types.js';
import { addSecret, maskSecrets, SecretHoldback } from '../../internal/secrets.js';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };

/** A key the model echoes back, streamed in pieces: masked whole wherever the text is written. */
const KEY = 'sk-ant-echoed-key-0123456789';
// Added first, shorter: it begins the longer one.
const SHORT = 'sk-ant-api03';
const LONG = 'sk-ant-api03-Zx9LongSecretPart';
addSecret(SHORT);
addSecret(LONG);
addSecret(KEY);

const TEXT = `auth=${KEY} and again ${KEY}.`;
const MASKED = 'auth=*** and again ***.';

/** `text` cut at every pair of positions: every way a key can come split in two or three pieces. */
function* splits(text: string): Generator<string[]> {
  for (let i = 0; i <= text.length; i++) {
    for (let j = i; j <= text.length; j++) yield [text.slice(0, i), text.slice(i, j), text.slice(j)];
  }
}

function streamed(pieces: string[]): string[] {
  const holdback = new SecretHoldback();
  return [...pieces.map((piece) => holdback.push(piece)), holdback.flush()];
}

describe('maskSecrets', () => {
  it('masks the longest secret first: one that begins another does not expose its rest', () => {
    expect(maskSecrets(`auth=${LONG} short=${SHORT}.`)).toBe('auth=*** short=***.');
    const late = 'late-secret-0001';
    addSecret(late);
    addSecret(`${late}-and-more`);
    expect(maskSecrets(`x ${late}-and-more y ${late} z`)).toBe('x *** y *** z');
  });
});

describe('SecretHoldback', () => {
  it('a key split at any one or two places is never written, and the text comes out as masked whole', () => {
    for (const pieces of splits(TEXT)) {
      const out = streamed(pieces);
      expect(out.join(''), JSON.stringify(pieces)).toBe(MASKED);
      for (const chunk of out) expect(chunk).not.toMatch(/sk-ant-e|0123456789/);
    }
  });

  it('one character at a time, and a secret that begins a longer one', () => {
    const chars = (text: string) => streamed(Array.from(text)).join('');
    expect(chars(TEXT)).toBe(MASKED);
    expect(chars(`a ${LONG} b ${SHORT} c ${SHORT}`)).toBe('a *** b *** c ***');
    for (const pieces of splits(`=${LONG}=`)) expect(streamed(pieces).join('')).toBe('=***=');
  });

  it('writes at once what cannot begin a secret, and holds only what can', () => {
    const holdback = new SecretHoldback();
    expect(holdback.push('Hello, world. ')).toBe('Hello, world. ');
    expect(holdback.push('The key is sk-an')).toBe('The key is ');
    expect(holdback.push('t-echoed')).toBe('');
    expect(holdback.push('-key-0123456789 and s')).toBe('*** and ');
    expect(holdback.push('o on')).toBe('so on');
    // A held tail that was no key after all is written as it is at the end.
    expect(holdback.push(' sk-ant-echo')).toBe(' ');
    expect(holdback.flush()).toBe('sk-ant-echo');
    expect(holdback.flush()).toBe('');
  });

  it('two secrets that overlap in the text: none is written whole, whatever the split', () => {
    addSecret('overlap-AAAA-BBBB');
    addSecret('BBBB-CCCC-tail');
    const text = 'x overlap-AAAA-BBBB-CCCC-tail y';
    const whole = maskSecrets(text);
    for (const pieces of splits(text)) {
      const out = streamed(pieces).join('');
      expect(out, JSON.stringify(pieces)).toBe(whole);
      expect(out).not.toContain('overlap-AAAA-BBBB');
      expect(out).not.toContain('BBBB-CCCC-tail');
    }
  });
});

const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };

function event(body: RunEventBody, agentPath = 'lead', depth = 0): RunEvent {
  const agent = agentPath.split(':').at(-1) ?? agentPath;
  return { path: agentPath, agent, depth, time: 1, ...body } as RunEvent;
}

function result(content: string): AgentRunResult {
  return {
    agent: 'lead',
    path: 'lead',
    depth: 0,
    status: 'completed',
    content,
    model: 'anthropic/claude-x',
    stopReason: 'end_turn',
    usage,
    retries: 0,
    turns: 1,
    durationMs: 1,
    toolCalls: 0,
    toolCallDetails: [],
    filesRead: [],
    filesModified: [],
    children: [],
  };
}

describe('--stream: the renderer', () => {
  function render(pieces: string[], options: { toolTurn?: boolean } = {}) {
    const out: string[] = [];
    const renderer = createRunRenderer({
      json: false,
      verbose: false,
      stream: true,
      stdout: { write: (text: string) => out.push(text) },
      stderr: { write: () => {} },
    });
    let content = '';
    if (options.toolTurn) {
      renderer.emit(event({ type: 'turn.start', turn: 1, messages: 1, pendingToolCalls: 0 }));
      for (const text of pieces) renderer.emit(event({ type: 'text.delta', text }));
      renderer.emit(event({ type: 'turn.end', turn: 1, stopReason: 'tool_use', toolCalls: 1, usage }));
      // Held text went out with the turn's end, before the separator.
      expect(out.at(-1)).toBe('\n\n');
    }
    renderer.emit(event({ type: 'turn.start', turn: 2, messages: 3, pendingToolCalls: 0 }));
    for (const text of pieces) {
      renderer.emit(event({ type: 'text.delta', text }));
      content += text;
    }
    renderer.finish({ result: result(content), budget: { used: 1 } });
    return out;
  }

  it('a key split at any place is masked on stdout, and the held part goes out before what follows', () => {
    for (const pieces of splits(TEXT)) {
      const out = render(pieces);
      expect(out.join(''), JSON.stringify(pieces)).toBe(MASKED);
      for (const chunk of out) expect(chunk).not.toMatch(/sk-ant-e|0123456789/);
    }
    expect(render(['auth=sk-ant', '-echoed-key', '-0123456789'], { toolTurn: true }).join('')).toBe(
      'auth=***\n\nauth=***',
    );
    expect(render(['ends sk-ant-ech'], { toolTurn: true }).join('')).toBe(
      'ends sk-ant-ech\n\nends sk-ant-ech',
    );
  });
});

describe('--events: text deltas', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-events-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const validate = new Ajv2020({ strict: false }).compile(eventSchema);

  function logged(events: RunEvent[]): RunEvent[] {
    const file = path.join(dir, 'events.jsonl');
    const log = openEventLog(file, { write: () => {} });
    for (const e of events) log.write(e);
    log.close();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toMatch(/sk-ant-e|0123456789/);
    const lines = text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as RunEvent);
    for (const line of lines) expect(validate(line), JSON.stringify(validate.errors)).toBe(true);
    return lines;
  }

  const textOf = (events: RunEvent[], agentPath: string) =>
    events
      .filter((e) => e.path === agentPath && e.type === 'text.delta')
      .map((e) => (e.type === 'text.delta' ? e.text : ''))
      .join('');

  it('a key split at any place is masked; held text is written before the agent’s next event', () => {
    for (const pieces of splits(TEXT)) {
      const events = logged([
        ...pieces.map((text) => event({ type: 'text.delta', text })),
        event({ type: 'turn.end', turn: 1, stopReason: 'end_turn', toolCalls: 0, usage }),
      ]);
      expect(textOf(events, 'lead'), JSON.stringify(pieces)).toBe(MASKED);
      expect(events.at(-1)?.type).toBe('turn.end');
      // No empty delta: one whose text is all held is not written.
      for (const e of events) if (e.type === 'text.delta') expect(e.text).not.toBe('');
    }
  });

  it('two agents streaming interleaved: each agent’s text is masked on its own, a sub-agent’s by lines, held text flushed at close', () => {
    const a = 'lead';
    const b = 'lead/call_agent#1:worker';
    const events = logged([
      event({ type: 'text.delta', text: 'A: sk-ant-' }, a),
      event({ type: 'text.delta', text: 'B: sk-ant-echoed' }, b, 1),
      event({ type: 'text.delta', text: 'echoed-key-' }, a),
      event({ type: 'text.delta', text: '-key-01234' }, b, 1),
      event({ type: 'text.delta', text: '0123456789!' }, a),
      event({ type: 'text.delta', text: '56789 ok' }, b, 1),
      event({ type: 'tool.start', turn: 1, callId: 'c', name: 'read_file', input: {} }, b, 1),
      event({ type: 'text.delta', text: ' then sk-an' }, b, 1),
    ]);
    expect(textOf(events, a)).toBe('A: ***!');
    expect(textOf(events, b)).toBe('B: *** ok then sk-an');
    // Deltas all held are not written; `sk-an` (held: it could begin the key) goes out at the close.
    // The sub-agent's text waits for a line's end: it goes out whole before its next event.
    expect(events.map((e) => `${e.type}:${e.path}:${e.type === 'text.delta' ? e.text : ''}`)).toEqual([
      `text.delta:${a}:A: `,
      `text.delta:${a}:***!`,
      `text.delta:${b}:B: *** ok`,
      `tool.start:${b}:`,
      `text.delta:${b}: then sk-an`,
    ]);
  });
});
