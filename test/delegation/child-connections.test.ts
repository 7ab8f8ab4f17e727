import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { childConnections } from '../../internal/delegation/child-connections.js';
import { CHILDREN_PER_TURN } from '../../internal/fanout/start-pacer.js';
import type { JsonValue, ToolCall } from '../../internal/provider/types.js';
import type { ScriptedReply } from '../fake-llm/types.js';
import { waitFor } from '../run/cli.js';
import { agentOf, useHome } from '../runner/harness.js';

const t = useHome();

const call = (name: string, args: ToolCall['arguments']): ToolCall => ({
  id: `c${name}`,
  name,
  arguments: args,
});
const load = (name: string) => loadAgent(name, { searchDirs: [t.home.agentsDir], env: t.home.env });
const all = new Set(['call_agent', 'spawn_agents', 'delegate_task']);
/** A sub-agent on another provider than the lead's. */
const writeFar = () =>
  fs.writeFileSync(
    path.join(t.home.agentsDir, 'far.toml'),
    'name = "far"\nmodel = "openai/gpt-test"\nsystem_prompt = "agent:far"\n',
  );

describe('connections opened for the children an answer starts', () => {
  it('counts the calls that start a child on the same provider: call_agent to one, every spawned task, the sub-tasks that wait for none', async () => {
    t.home.agent('lead', 'sub_agents = ["near", "far"]');
    t.home.agent('near');
    writeFar();
    const callable = [await load('near'), await load('far')];
    const connections = childConnections(await load('lead'), 'anthropic', all, callable, {
      maxParallel: 64,
      subagentModel: false,
    });
    expect(connections?.ahead).toBe(32);
    const forCalls = connections?.forCalls ?? (() => -1);
    expect(forCalls([])).toBe(0);
    expect(
      forCalls([
        call('call_agent', { agent: 'near', task: 'a' }),
        call('call_agent', { agent: 'near', task: 'b' }),
        call('call_agent', { agent: 'far', task: 'c' }),
        call('read_file', { path: 'x' }),
      ]),
    ).toBe(2);
    expect(forCalls([call('spawn_agents', { tasks: [{ task: 'a' }, { task: 'b' }, { task: 'c' }] })])).toBe(
      3,
    );
    const subtasks: JsonValue[] = [
      { task: 'a' },
      { task: 'b', depends_on: [0] },
      { task: 'c', depends_on: [] },
    ];
    expect(forCalls([call('delegate_task', { plan: 'p', subtasks })])).toBe(2);
    // A tool the agent is not offered starts nothing, whatever its name.
    const onlyCalls = childConnections(await load('lead'), 'anthropic', new Set(['call_agent']), callable, {
      maxParallel: 64,
      subagentModel: false,
    });
    expect(onlyCalls?.forCalls([call('spawn_agents', { tasks: [{ task: 'a' }] })])).toBe(0);
  });

  it('never more than max_parallel, ahead or for a turn', async () => {
    t.home.agent('lead', '[sub_agents_config]\nspawn = true');
    const connections = childConnections(await load('lead'), 'anthropic', all, [], {
      maxParallel: 3,
      subagentModel: false,
    });
    expect(connections?.ahead).toBe(3);
    const tasks = Array.from({ length: 10 }, (_, i) => ({ task: `t${i}` }));
    expect(connections?.forCalls([call('spawn_agents', { tasks })])).toBe(3);
  });

  it('once the answer is read, at most the children of the next two turns of starts (64); later ones open their own', async () => {
    t.home.agent('lead', '[sub_agents_config]\nspawn = true\nmax_parallel = 512');
    const connections = childConnections(await load('lead'), 'anthropic', all, [], {
      maxParallel: 512,
      subagentModel: false,
    });
    const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ task: `t${i}` }));
    expect(connections?.forCalls([call('spawn_agents', { tasks: tasks(40) })])).toBe(40);
    expect(connections?.forCalls([call('spawn_agents', { tasks: tasks(512) })])).toBe(2 * CHILDREN_PER_TURN);
  });

  it('none when no child it may start calls its provider, unless a call may choose the model', async () => {
    t.home.agent('lead', 'sub_agents = ["far"]');
    writeFar();
    const lead = await load('lead');
    const far = [await load('far')];
    const options = { maxParallel: 64, subagentModel: false };
    expect(childConnections(lead, 'anthropic', new Set(['call_agent']), far, options)).toBeUndefined();
    const chosen = childConnections(lead, 'anthropic', new Set(['call_agent']), far, {
      ...options,
      subagentModel: true,
    });
    expect(chosen?.forCalls([call('call_agent', { agent: 'far', task: 'a' })])).toBe(1);
  });

  it('a turn of 40 calls, wider than the 32 opened ahead: the rest are opened once the answer is read, before the children start', async () => {
    // The children fail before they send (their workdir is missing): every connection the
    // server accepts was opened by the lead, ahead of its turn (32) or once its answer was read.
    t.home.agent('lead', 'sub_agents = ["w"]\n[sub_agents_config]\nmax_parallel = 64');
    fs.writeFileSync(
      path.join(t.home.agentsDir, 'w.toml'),
      `name = "w"\nmodel = "anthropic/claude-test"\nsystem_prompt = "agent:w"\nworkdir = "${t.home.root}/missing"\n`,
    );
    const calls = Array.from({ length: 40 }, (_, i) => ({
      name: 'call_agent',
      arguments: { agent: 'w', task: `part ${i}` },
    }));
    t.llm.respond(
      (request): ScriptedReply =>
        request.toolResults.length === 0 ? { toolCalls: calls, delayMs: 100 } : { text: 'done' },
    );
    const before = t.llm.connections;
    const { outcome } = await t.home.run('lead');
    expect(outcome.error).toBeUndefined();
    expect(t.llm.requests.map(agentOf)).toEqual(['lead', 'lead']);
    // Accepted by the server once they are (the pool closed them when the run ended).
    await waitFor(() => t.llm.connections - before >= 40);
    expect(t.llm.connections - before).toBe(40);
  });
});
