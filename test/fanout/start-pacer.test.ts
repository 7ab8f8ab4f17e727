import { describe, expect, it } from 'vitest';
import { createStartPacer } from '../../internal/fanout/start-pacer.js';
import type { RunEvent } from '../../internal/runner/events.js';
import type { ScriptedReply } from '../fake-llm/types.js';
import { agentOf, useHome } from '../runner/harness.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the start pacer', () => {
  it('lets `perTurn` start in one turn of the event loop, then `perTurn` a turn, in order', async () => {
    const pacer = createStartPacer(3);
    const started: number[] = [];
    const all = Array.from({ length: 8 }, async (_, i) => {
      const turn = pacer.turn();
      if (turn) await turn;
      started.push(i);
    });
    await Promise.resolve();
    expect(started).toEqual([0, 1, 2]);
    await nextTurn();
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    await nextTurn();
    expect(started).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await Promise.all(all);
  });

  it('starts at once again once a turn has passed, and a start never overtakes one waiting', async () => {
    const pacer = createStartPacer(2);
    expect(pacer.turn()).toBeUndefined();
    expect(pacer.turn()).toBeUndefined();
    const third = pacer.turn();
    expect(third).toBeInstanceOf(Promise);
    // The next turn's slots go to the one waiting first.
    await third;
    expect(pacer.turn()).toBeUndefined();
    expect(pacer.turn()).toBeInstanceOf(Promise);
    await nextTurn();
    await nextTurn();
    expect(pacer.turn()).toBeUndefined();
  });
});

describe('a wide fan-out starts its children a slice at a time', () => {
  const t = useHome();

  it('the first children are answered by the server while the last are not started yet', async () => {
    // The server runs in this process: it can read a request only when the event loop turns.
    // Started all in one stretch, no child request would be read before the 100th child starts.
    t.home.agent('lead', 'sub_agents = ["w"]\n[sub_agents_config]\nmax_parallel = 128');
    t.home.agent('w');
    const calls = Array.from({ length: 100 }, (_, i) => ({
      name: 'call_agent',
      arguments: { agent: 'w', task: `part ${i}` },
    }));
    const order: string[] = [];
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'w') {
        order.push('request read');
        return { text: 'done' };
      }
      return request.toolResults.length === 0 ? { toolCalls: calls } : { text: 'merged' };
    });
    const emit = (event: RunEvent) => {
      if (event.type === 'agent.start' && event.depth === 1) order.push('child started');
    };
    const { outcome } = await t.home.run('lead', { emit });
    expect(outcome.error).toBeUndefined();
    expect(order.filter((entry) => entry === 'child started')).toHaveLength(100);
    expect(order.indexOf('request read')).toBeLessThan(order.lastIndexOf('child started'));
  });
});
