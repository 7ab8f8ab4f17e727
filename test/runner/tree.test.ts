import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CancelledError } from '../../internal/errors.js';
import { startFakeLlm } from '../fake-llm/index.js';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentOf, callAgent, makeHome, requestsOf, useHome } from './harness.js';

const t = useHome();

/** Each agent calls the next one in the chain while it can; the last one answers. */
function chain(names: string[]): (request: RecordedRequest) => ScriptedReply {
  return (request) => {
    const me = agentOf(request);
    const next = names[names.indexOf(me) + 1];
    if (next && request.toolNames.includes('call_agent') && request.toolResults.length === 0) {
      return { toolCalls: callAgent(next, `work of ${next}`) };
    }
    return { text: `${me}:${request.toolResults[0]?.content ?? 'leaf'}` };
  };
}

/** Waits until the server has seen the client go away (or finish) for every request. */
async function settled(): Promise<void> {
  for (let i = 0; i < 100 && t.llm.requests.some((r) => r.finishedAt === undefined); i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('depth', () => {
  const names = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5'];

  it('defaults to 3: the agent at depth 3 gets no tools at all', async () => {
    names.forEach((name, i) => {
      const next = names[i + 1];
      t.home.agent(name, `${next ? `sub_agents = ["${next}"]\n` : ''}tools = ["read_file"]`);
    });
    t.llm.respond(chain(names));
    const { outcome } = await t.home.run('d0');
    expect(outcome.error).toBeUndefined();
    expect(t.llm.requests.map((r) => `${agentOf(r)}:${r.toolNames.join('+') || '-'}`)).toEqual([
      'd0:read_file+call_agent',
      'd1:read_file+call_agent',
      'd2:read_file+call_agent',
      'd3:-',
      'd2:read_file+call_agent',
      'd1:read_file+call_agent',
      'd0:read_file+call_agent',
    ]);
    expect(outcome.result.content).toBe('d0:d1:d2:d3:leaf');
    expect(outcome.result.children[0]?.children[0]?.children[0]).toMatchObject({
      agent: 'd3',
      depth: 3,
      path: 'd0/call_agent#1:d1/call_agent#1:d2/call_agent#1:d3',
    });
  });

  it('goes to 5 with max_depth = 5, and no further', async () => {
    names.forEach((name, i) => {
      const next = names[i + 1] ?? 'd0';
      const config = i === 0 ? '\n[sub_agents_config]\nmax_depth = 5' : '';
      t.home.agent(name, `sub_agents = ["${next}"]${config}`);
    });
    t.llm.respond(chain([...names, 'd0']));
    const { outcome } = await t.home.run('d0');
    expect(outcome.error).toBeUndefined();
    const offered = names.map((name) => requestsOf(t.llm, name)[0]?.toolNames.join('+') || '-');
    expect(offered).toEqual(['call_agent', 'call_agent', 'call_agent', 'call_agent', 'call_agent', '-']);
    expect(outcome.result.content).toBe('d0:d1:d2:d3:d4:d5:leaf');
  });
});

describe('fan-out', () => {
  function twoSlowChildren(request: RecordedRequest): ScriptedReply {
    const me = agentOf(request);
    if (me === 'a' || me === 'b') return { text: `from ${me}`, delayMs: 150 };
    if (request.toolResults.length > 0)
      return { text: request.toolResults.map((r) => r.content).join(' | ') };
    return { toolCalls: [...(callAgent('a', 'one') ?? []), ...(callAgent('b', 'two') ?? [])] };
  }

  it('runs the calls of one turn at once when parallel (the default), results in call order', async () => {
    t.home.agent('par', 'sub_agents = ["a", "b"]\n[sub_agents_config]\ntimeout = 30');
    t.home.agent('a');
    t.home.agent('b');
    t.llm.respond(twoSlowChildren);
    const timersBefore = activeTimers();
    const { outcome } = await t.home.run('par');
    expect(activeTimers()).toBeLessThanOrEqual(timersBefore);
    expect(outcome.result.content).toBe('from a | from b');
    const [a, b] = [requestsOf(t.llm, 'a')[0]!, requestsOf(t.llm, 'b')[0]!];
    // Both were in flight at once: each arrived before the other finished.
    expect(b.receivedAt).toBeLessThan(a.finishedAt ?? 0);
    expect(a.receivedAt).toBeLessThan(b.finishedAt ?? 0);
    expect(outcome.result.children.map((c) => c.path)).toEqual(['par/call_agent#1:a', 'par/call_agent#2:b']);
  });

  it('runs them strictly one after another when parallel = false', async () => {
    t.home.agent('seq', 'sub_agents = ["a", "b"]\n[sub_agents_config]\nparallel = false');
    t.home.agent('a');
    t.home.agent('b');
    t.llm.respond(twoSlowChildren);
    const { outcome } = await t.home.run('seq');
    expect(outcome.result.content).toBe('from a | from b');
    const [a, b] = [requestsOf(t.llm, 'a')[0]!, requestsOf(t.llm, 'b')[0]!];
    expect(b.receivedAt).toBeGreaterThanOrEqual(a.finishedAt ?? Number.POSITIVE_INFINITY);
  });

  it('queues beyond max_parallel first-in-first-out', async () => {
    t.home.agent('wide', 'sub_agents = ["a", "b"]\n[sub_agents_config]\nmax_parallel = 1');
    t.home.agent('a');
    t.home.agent('b');
    t.llm.respond(twoSlowChildren);
    const { outcome } = await t.home.run('wide');
    expect(outcome.result.content).toBe('from a | from b');
    const [first, second] = [requestsOf(t.llm, 'a')[0]!, requestsOf(t.llm, 'b')[0]!].sort(
      (x, y) => x.receivedAt - y.receivedAt,
    );
    expect(second?.receivedAt).toBeGreaterThanOrEqual(first?.finishedAt ?? Number.POSITIVE_INFINITY);
  });
});

describe('per-run sharing', () => {
  it('resolves the sub-agent once for a fan-out; a later call reads its files afresh', async () => {
    fs.writeFileSync(path.join(t.home.root, 'note.txt'), 'v1');
    t.home.agent('fanread', 'sub_agents = ["reader"]');
    t.home.agent('reader', 'files = ["note.txt"]');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'reader') {
        fs.writeFileSync(path.join(t.home.root, 'note.txt'), 'v2');
        return { text: 'read' };
      }
      const calls = (n: number) =>
        Array.from({ length: n }, () => callAgent('reader', 'read it') ?? []).flat();
      if (request.toolResults.length === 0) return { toolCalls: calls(3) };
      if (request.toolResults.length === 3) return { toolCalls: calls(1) };
      return { text: 'done' };
    });
    const { outcome } = await t.home.run('fanread');
    expect(outcome.result.content).toBe('done');
    const notes = requestsOf(t.llm, 'reader').map((r) => /```txt\n(v\d)\n```/.exec(r.system)?.[1]);
    expect(notes).toEqual(['v1', 'v1', 'v1', 'v2']);
  });

  it('reads the sub-agents\u2019 files while the parent\u2019s first turn is in flight', async () => {
    t.home.agent('eager', 'sub_agents = ["late"]');
    t.home.agent('late');
    const lateFile = path.join(t.home.agentsDir, 'late.toml');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'late') return { text: 'late answer' };
      if (request.toolResults.length > 0) return { text: request.toolResults[0]?.content ?? '' };
      // The file goes away while the parent's turn is still being answered: already read.
      setTimeout(() => fs.rmSync(lateFile), 100);
      return { toolCalls: callAgent('late', 'now'), delayMs: 200 };
    });
    const { outcome } = await t.home.run('eager');
    expect(fs.existsSync(lateFile)).toBe(false);
    expect(outcome.result.content).toBe('late answer');
  });

  it('keeps the first 1024 bytes of a tool output in the call details, then "... (truncated)"', async () => {
    t.home.agent('big', 'sub_agents = ["wordy"]');
    t.home.agent('wordy');
    const long = 'é'.repeat(600); // 1200 bytes
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'wordy') return { text: long };
      if (request.toolResults.length > 0) return { text: `got ${request.toolResults[0]?.content.length}` };
      return { toolCalls: callAgent('wordy', 'talk') };
    });
    const { outcome } = await t.home.run('big');
    expect(outcome.result.content).toBe('got 600');
    expect(outcome.result.toolCallDetails[0]?.output).toBe(`${'é'.repeat(512)}... (truncated)`);
  });
});

describe('deadlines and cancellation', () => {
  it('aborts a sub-agent at its own timeout; the parent gets the spec error and carries on', async () => {
    t.home.agent('waiter', 'sub_agents = ["sleepy", "a"]\n[sub_agents_config]\ntimeout = 1');
    t.home.agent('sleepy');
    t.home.agent('a');
    t.llm.respond((request): ScriptedReply => {
      const me = agentOf(request);
      if (me === 'sleepy') return { fault: { kind: 'hang' } };
      if (me === 'a') return { text: 'quick' };
      if (request.toolResults.length > 0) return { text: 'handled' };
      return { toolCalls: [...(callAgent('sleepy', 'zz') ?? []), ...(callAgent('a', 'q') ?? [])] };
    });
    const timersBefore = activeTimers();
    // `sleepy` never gets an answer: the run ends only by its timeout.
    const { outcome, events } = await t.home.run('waiter');
    expect(activeTimers()).toBeLessThanOrEqual(timersBefore);
    expect(outcome.error).toBeUndefined();
    expect(outcome.result.content).toBe('handled');
    expect(t.llm.requests.at(-1)?.toolResults.map((r) => r.content)).toEqual([
      'Error: sub-agent "sleepy" failed - timeout after 1s. You may retry or proceed without this result.',
      'quick',
    ]);
    expect(outcome.result.children.map((c) => c.status)).toEqual(['timeout', 'completed']);
    expect(events.find((e) => e.type === 'agent.end' && e.agent === 'sleepy')).toMatchObject({
      status: 'timeout',
    });
    await settled();
    expect(requestsOf(t.llm, 'sleepy')[0]?.aborted).toBe(true);
  });

  it('cancels every in-flight request of the tree when the signal fires', async () => {
    t.home.agent('fan', 'sub_agents = ["sleepy"]');
    t.home.agent('sleepy');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'sleepy') return { fault: { kind: 'hang' } };
      return { toolCalls: [...(callAgent('sleepy', '1') ?? []), ...(callAgent('sleepy', '2') ?? [])] };
    });
    const controller = new AbortController();
    const poll = setInterval(() => {
      if (requestsOf(t.llm, 'sleepy').length === 2)
        controller.abort(new CancelledError('interrupted', 'SIGINT'));
    }, 5);
    const timersBefore = activeTimers();
    // Both requests hang: the run ends only by the abort.
    const { outcome } = await t.home.run('fan', { signal: controller.signal });
    clearInterval(poll);
    expect(activeTimers()).toBeLessThanOrEqual(timersBefore);
    expect(outcome.error).toBeInstanceOf(CancelledError);
    expect(outcome.error?.exitCode).toBe(130);
    expect(outcome.result.status).toBe('cancelled');
    await settled();
    expect(requestsOf(t.llm, 'sleepy').map((r) => r.aborted)).toEqual([true, true]);
  });

  it('ends the run at its deadline as a provider timeout (exit 3)', async () => {
    t.home.agent('slow');
    t.llm.respond(() => ({ fault: { kind: 'hang' } }));
    const { outcome } = await t.home.run('slow', { timeoutSeconds: 0.2 });
    expect(outcome.error?.exitCode).toBe(3);
    expect(outcome.error?.message).toBe('timeout after 0.2s');
    expect(outcome.result.status).toBe('timeout');
  });
});

describe('record and replay', () => {
  it('replays a recorded parallel tree identically with the server gone and no key', async () => {
    const recorder = await startFakeLlm();
    const tape = makeHome(recorder);
    try {
      tape.agent('lead', 'sub_agents = ["left", "right"]');
      tape.agent('left');
      tape.agent('right');
      // `left` gets the same request twice: the first to arrive answers last.
      let lefts = 0;
      recorder.respond((request): ScriptedReply => {
        const me = agentOf(request);
        if (me === 'left') return ++lefts === 1 ? { text: 'L1', delayMs: 60 } : { text: 'L2' };
        if (me === 'right') return { text: 'R' };
        if (request.toolResults.length > 0) {
          return { text: `lead got ${request.toolResults.map((r) => r.content)}` };
        }
        const calls = [callAgent('left', 'x'), callAgent('left', 'x'), callAgent('right', 'y')];
        return { toolCalls: calls.flatMap((call) => call ?? []) };
      });
      const cassette = path.join(tape.root, 'run.jsonl');
      const recorded = await tape.run('lead', { record: cassette, stream: true });
      expect(recorded.outcome.error).toBeUndefined();
      expect(fs.readFileSync(cassette, 'utf8').trim().split('\n')).toHaveLength(5);
      const answer = recorded.outcome.result.content;
      expect(['lead got L1,L2,R', 'lead got L2,L1,R']).toContain(answer);
      expect(fs.readFileSync(cassette, 'utf8')).not.toContain('test-key');
      await recorder.close();

      const offline = { HOME: tape.root };
      for (let i = 0; i < 2; i++) {
        const replayed = await tape.run('lead', { replay: cassette, env: offline, stream: true });
        expect(replayed.outcome.error).toBeUndefined();
        expect(strip(replayed.outcome.result)).toEqual(strip(recorded.outcome.result));
        const deltas = replayed.events.flatMap((e) => (e.type === 'text.delta' ? [e.text] : []));
        expect(deltas.join('')).toBe(answer);
      }

      const miss = await tape.run('lead', { replay: cassette, env: offline, input: 'something else' });
      expect(miss.outcome.error?.exitCode).toBe(3);
      expect(miss.outcome.error?.message).toMatch(
        /^replay: no recorded response for agent "lead" \(request [0-9a-f]{64}\) in .*run\.jsonl; the nearest recorded request of "lead" differs first in the user message \(recorded \d+ chars, ".*", now 14 chars, "something else"\): the input differs: was the same stdin or -p given\?$/,
      );
    } finally {
      tape.remove();
    }
  });
});

/** Timers alive in this process: none of the run's may outlive it. */
function activeTimers(): number {
  return process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;
}

/** A result without its timings. */
function strip(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value, (key, v: unknown) => (key === 'durationMs' ? 0 : v)));
}
