import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BudgetError, RuntimeError } from '../../internal/errors.js';
import type { ScriptedReply } from '../fake-llm/types.js';
import { agentOf, callAgent, hasToolsKey, requestsOf, useHome } from './harness.js';

const t = useHome();

describe('the turn loop', () => {
  it('makes one call with no tools key when the agent has no tools', async () => {
    t.home.agent('solo');
    t.llm.enqueue({ text: 'just text', usage: { input: 7, output: 3 } });
    const { outcome } = await t.home.run('solo');
    expect(outcome.error).toBeUndefined();
    expect(outcome.result).toMatchObject({
      status: 'completed',
      content: 'just text',
      turns: 1,
      toolCalls: 0,
    });
    expect(outcome.result.usage).toMatchObject({ inputTokens: 7, outputTokens: 3 });
    expect(t.llm.requests).toHaveLength(1);
    expect(hasToolsKey(t.llm.requests[0]!)).toBe(false);
    expect(t.llm.rejections).toEqual([]);
  });

  it('offers call_agent with sub_agents, runs the sub-agent, sends the result back, sums tokens', async () => {
    t.home.agent('boss', 'sub_agents = ["helper"]');
    t.home.agent('helper');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'helper') return { text: 'helper answer', usage: { input: 100, output: 50 } };
      if (request.toolResults.length === 0) {
        return { text: 'Delegating.', toolCalls: callAgent('helper', 'check it', 'some context') };
      }
      return { text: 'final answer' };
    });
    const { outcome, events } = await t.home.run('boss');
    expect(outcome.error).toBeUndefined();
    const [first, helper, second] = t.llm.requests;
    expect(first?.toolNames).toEqual(['call_agent']);
    const body = first?.body as { tools?: unknown[] } | undefined;
    expect(body?.tools).toEqual([
      {
        name: 'call_agent',
        description:
          'Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result. Available agents: helper',
        input_schema: {
          type: 'object',
          properties: {
            agent: {
              type: 'string',
              description: 'Name of the sub-agent to invoke (must be one of: helper)',
            },
            task: { type: 'string', description: 'What you need the sub-agent to do' },
            context: {
              type: 'string',
              description: 'Additional context from your conversation to pass along',
            },
          },
          required: ['agent', 'task'],
        },
      },
    ]);
    expect(agentOf(helper!)).toBe('helper');
    expect(helper?.lastUserText).toBe('Task: check it\n\nContext:\nsome context');
    expect(hasToolsKey(helper!)).toBe(false);
    expect(second?.toolResults).toEqual([expect.objectContaining({ content: 'helper answer' })]);
    expect(second?.toolResults[0]?.isError).not.toBe(true);

    const { result } = outcome;
    expect(result).toMatchObject({ content: 'final answer', turns: 2, toolCalls: 1, status: 'completed' });
    expect(result.usage).toMatchObject({ inputTokens: 20, outputTokens: 10 });
    expect(result.children).toHaveLength(1);
    expect(result.children[0]).toMatchObject({
      agent: 'helper',
      path: 'boss/call_agent#1:helper',
      depth: 1,
      status: 'completed',
      content: 'helper answer',
      usage: { inputTokens: 100, outputTokens: 50 },
    });
    expect(outcome.budget.used).toBe(180);
    const kinds = events.map((e) => `${e.type}@${e.depth}`);
    expect(kinds).toContain('agent.start@1');
    expect(kinds).toContain('agent.end@1');
    expect(events.find((e) => e.type === 'agent.end')).toMatchObject({ status: 'completed', chars: 13 });
  });

  it('answers bad calls with error results in the spec words and carries on', async () => {
    t.home.agent('boss2', 'sub_agents = ["helper", "ghost", "flaky"]');
    t.home.agent('helper');
    t.home.agent('flaky', '[retry]\nmax_retries = 0');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'flaky') return { fault: { kind: 'status', status: 500, message: 'boom' } };
      if (agentOf(request) === 'helper') return { text: 'fine' };
      if (request.toolResults.length > 0) return { text: 'done anyway' };
      return {
        toolCalls: [
          { name: 'nope', arguments: {} },
          { name: 'call_agent', arguments: { agent: 'stranger', task: 'x' } },
          { name: 'call_agent', arguments: { agent: 'helper' } },
          { name: 'call_agent', arguments: { task: 'x' } },
          { name: 'call_agent', arguments: { agent: 'ghost', task: 'x' } },
          { name: 'call_agent', arguments: { agent: 'flaky', task: 'x' } },
          { name: 'call_agent', arguments: { agent: 'helper', task: 'x', context: '' } },
        ],
      };
    });
    const { outcome } = await t.home.run('boss2');
    expect(outcome.error).toBeUndefined();
    expect(outcome.result.content).toBe('done anyway');
    const results = t.llm.requests.at(-1)?.toolResults ?? [];
    expect(results.map((r) => r.content)).toEqual([
      'Unknown tool: "nope"',
      `call_agent error: agent "stranger" is not in this agent's sub_agents list`,
      'call_agent error: "task" argument is required',
      'call_agent error: "agent" argument is required',
      'call_agent error: failed to load agent "ghost": agent config not found: ghost',
      expect.stringMatching(
        /^Error: sub-agent "flaky" failed - .*boom.*\. You may retry or proceed without this result\.$/,
      ),
      'fine',
    ]);
    expect(results.map((r) => r.isError === true)).toEqual([true, true, true, true, true, true, false]);
    expect(requestsOf(t.llm, 'helper')[0]?.lastUserText).toBe('Task: x');
    expect(outcome.result.children.map((c) => `${c.agent}:${c.status}`)).toEqual([
      'ghost:error',
      'flaky:error',
      'helper:completed',
    ]);
  });

  it('stops after 50 turns with the exact error, and at max_turns when lower', async () => {
    t.home.agent('looper', 'sub_agents = ["helper"]');
    t.home.agent('short', 'sub_agents = ["helper"]\nmax_turns = 3');
    t.llm.respond(() => ({
      text: 'again',
      toolCalls: [{ name: 'nope', arguments: {} }],
      usage: { input: 1, output: 1 },
    }));
    const { outcome } = await t.home.run('looper');
    expect(outcome.error).toBeInstanceOf(RuntimeError);
    expect(outcome.error?.message).toBe('agent exceeded maximum conversation turns (50)');
    expect(outcome.error?.exitCode).toBe(1);
    expect(t.llm.requests).toHaveLength(50);
    expect(outcome.result).toMatchObject({ content: 'again', turns: 50, usage: { inputTokens: 50 } });

    t.llm.requests.length = 0;
    const short = await t.home.run('short');
    expect(short.outcome.error?.message).toBe('agent exceeded maximum conversation turns (3)');
    expect(t.llm.requests).toHaveLength(3);
  });

  it('stops before the next call once the tree-wide budget is spent, keeping the answer so far', async () => {
    t.home.agent('spender', 'sub_agents = ["helper"]');
    t.home.agent('helper');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'helper') return { text: 'costly', usage: { input: 10, output: 5 } };
      if (request.toolResults.length > 0) return { text: 'never sent' };
      return { text: 'Answer so far.', toolCalls: callAgent('helper', 'x'), usage: { input: 10, output: 5 } };
    });
    const { outcome } = await t.home.run('spender', { maxTokens: 20 });
    expect(outcome.error).toBeInstanceOf(BudgetError);
    expect(outcome.error?.message).toBe('budget exceeded: used 30 of 20 tokens');
    expect(outcome.error?.exitCode).toBe(4);
    expect(outcome.result).toMatchObject({ status: 'budget_exceeded', content: 'Answer so far.' });
    expect(outcome.budget).toEqual({ used: 30, limit: 20 });
    expect(t.llm.requests).toHaveLength(2);
  });

  it('an observer that throws as a turn starts fails that agent, and its budget reservation is released', async () => {
    t.home.agent('lead', 'sub_agents = ["helper"]');
    t.home.agent('helper');
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) === 'helper') return { text: 'helped' };
      if (request.toolResults.length > 0) return { text: 'done' };
      const call = (task: string) => ({ name: 'call_agent', arguments: { agent: 'helper', task } });
      return { toolCalls: [call('a'), call('b')] };
    });
    let thrown = false;
    // Each call's estimate (its max_tokens alone) is over the budget: they run one at a time.
    const { outcome } = await t.home.run('lead', {
      maxTokens: 1000,
      timeoutSeconds: 5,
      emit: (event) => {
        if (event.type === 'turn.start' && event.agent === 'helper' && !thrown) {
          thrown = true;
          throw new Error('observer failed');
        }
      },
    });
    // A run stuck on the failed observer would end at its 5 s deadline, not completed.
    expect(outcome.result.status).toBe('completed');
    expect(requestsOf(t.llm, 'helper')).toHaveLength(1);
    expect(outcome.result.children.map((child) => child.status).sort()).toEqual(['completed', 'error']);
  });

  it('gives --model to the top-level agent only; a sub-agent with `inherit` takes its parent model', async () => {
    t.home.agent('modeled', 'sub_agents = ["heir", "own"]');
    t.home.agent('heir');
    t.home.agent('own');
    const heirFile = `${t.home.agentsDir}/heir.toml`;
    fs.writeFileSync(
      heirFile,
      fs.readFileSync(heirFile, 'utf8').replace('"anthropic/claude-test"', '"inherit"'),
    );
    t.llm.respond((request): ScriptedReply => {
      if (agentOf(request) !== 'modeled') return { text: request.model };
      if (request.toolResults.length > 0)
        return { text: request.toolResults.map((r) => r.content).join(',') };
      return { toolCalls: [...(callAgent('heir', 'a') ?? []), ...(callAgent('own', 'b') ?? [])] };
    });
    const { outcome } = await t.home.run('modeled', { modelOverride: 'anthropic/flag-model' });
    expect(outcome.result.content).toBe('flag-model,claude-test');
    expect(outcome.result.model).toBe('anthropic/flag-model');
  });

  it('streams the top-level text as text.delta events', async () => {
    t.home.agent('streamer');
    t.llm.enqueue({ text: 'streamed words here' });
    const { outcome, events } = await t.home.run('streamer', { stream: true });
    expect(t.llm.requests[0]?.stream).toBe(true);
    const deltas = events.flatMap((e) => (e.type === 'text.delta' ? [e.text] : []));
    expect(deltas.join('')).toBe('streamed words here');
    expect(outcome.result.content).toBe('streamed words here');
  });
});
