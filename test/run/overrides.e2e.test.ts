import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { PAGED } from '../tools/mcp-servers.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `[sub_agents_config] overrides = true`: call_agent's model, tools, system_prompt, read_only and
 * max_tool_calls change what the child's requests hold, exactly; `read_only = true` in a file;
 * `AXE_SUBAGENT_MODEL` above all.
 */
const setup = e2eHomes();

type Call = Record<string, unknown>;

const toolNames = (request: RecordedRequest | undefined) => request?.toolNames ?? [];

async function seed(calls: Call[], options: { lead?: string[]; env?: Record<string, string> } = {}) {
  const { home, fake } = await setup();
  const work = home.file('work/notes.txt', 'x');
  const workdir = path.dirname(work);
  home.agent(
    'worker',
    agentToml('worker', {
      extra: [`workdir = "${workdir}"`, 'tools = ["read_file", "write_file", "run_command"]'],
      subAgents: ['helper'],
    }),
  );
  home.agent(
    'helper',
    agentToml('helper', { extra: [`workdir = "${workdir}"`, 'tools = ["read_file", "edit_file"]'] }),
  );
  home.agent(
    'lead',
    agentToml('lead', { subAgents: ['worker'], subAgentsConfig: options.lead ?? ['overrides = true'] }),
  );
  fake.respond((request): ScriptedReply => {
    const role = roleOf(request);
    if (role === 'lead') {
      return request.toolResults.length === 0
        ? {
            toolCalls: calls.map((args) => ({
              name: 'call_agent',
              arguments: { agent: 'worker', task: 't', ...args },
            })),
          }
        : { text: 'lead done' };
    }
    if (role === 'worker' && request.toolResults.length === 0 && request.toolNames.includes('call_agent'))
      return { toolCalls: [{ name: 'call_agent', arguments: { agent: 'helper', task: 'h' } }] };
    if (request.lastUserText.includes('loop') && request.toolResults.length < 5)
      return { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
    return { text: `${role} done` };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
    env: home.env(fake.url, options.env ?? {}),
  });
  const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
  return {
    home,
    fake,
    result,
    lead,
    byRole: (role: string) => fake.requests.filter((r) => roleOf(r) === role),
  };
}

describe.concurrent('per-call overrides', () => {
  it('offered in call_agent only with overrides = true', async () => {
    const on = await seed([{}]);
    const body = on.lead[0]?.body as { tools?: { input_schema: { properties: object } }[] } | undefined;
    const params = body?.tools?.[0]?.input_schema.properties;
    expect(Object.keys(params ?? {})).toEqual([
      'agent',
      'task',
      'context',
      // Overrides make the caller more than a Go-only file: call_agent takes a description too.
      'description',
      'model',
      'tools',
      'system_prompt',
      'read_only',
      'max_tool_calls',
    ]);
    // Without the field the arguments are read as Go axe reads them: ignored.
    const off = await seed([{ model: 'openai/gpt-test', read_only: true }], { lead: [] });
    expect(off.byRole('worker')[0]).toMatchObject({ wire: 'anthropic', model: 'claude-test' });
    expect(toolNames(off.byRole('worker')[0])).toEqual([
      'read_file',
      'write_file',
      'run_command',
      'call_agent',
    ]);
  });

  it("model and system_prompt: the child's request goes where and as the call says", async () => {
    const { fake, result } = await seed([
      { model: 'openai/gpt-test', system_prompt: 'ROLE:custom be brief' },
    ]);
    expect(result.code).toBe(0);
    const custom = fake.requests.filter((r) => roleOf(r) === 'custom');
    expect(custom[0]).toMatchObject({ wire: 'openai', model: 'gpt-test' });
    expect(custom[0]?.system).toBe('ROLE:custom be brief');
    expect(fake.requests.filter((r) => roleOf(r) === 'worker')).toHaveLength(0);
  });

  it('AXE_SUBAGENT_MODEL beats the call and the file, for every sub-agent', async () => {
    const { byRole } = await seed([{ model: 'openai/gpt-test' }], {
      env: { AXE_SUBAGENT_MODEL: 'ollama/llama-test' },
    });
    expect(byRole('worker')[0]).toMatchObject({ wire: 'ollama', model: 'llama-test' });
    expect(byRole('helper')[0]).toMatchObject({ wire: 'ollama', model: 'llama-test' });
    expect(byRole('lead')[0]).toMatchObject({ wire: 'anthropic' });
  });

  it('tools narrows the child only; a tool it does not have is an error result', async () => {
    const { lead, byRole } = await seed([{ tools: ['read_file'] }, { tools: ['read_file', 'url_fetch'] }]);
    expect(byRole('worker').map(toolNames)).toContainEqual(['read_file']);
    const results = lead.at(-1)?.toolResults ?? [];
    expect(results[0]).toMatchObject({ content: 'worker done', isError: false });
    expect(results[1]?.isError).toBe(true);
    expect(results[1]?.content).toBe(
      'Error: sub-agent "worker" failed - "tools" argument: worker has no tool "url_fetch" (its tools: read_file, write_file, run_command, call_agent). You may retry or proceed without this result.',
    );
  });

  it('read_only removes the writing tools of the child and of the agents it calls', async () => {
    const { byRole } = await seed([{ read_only: true }]);
    expect(toolNames(byRole('worker')[0])).toEqual(['read_file', 'call_agent']);
    expect(toolNames(byRole('helper')[0])).toEqual(['read_file']);
  });

  it('max_tool_calls: the smallest of the call, the default and the own limit wins', async () => {
    const call = await seed([{ max_tool_calls: 2, task: 'loop' }], {
      lead: ['overrides = true', 'max_tool_calls = 4'],
    });
    const capped = call.byRole('worker').filter((r) => r.lastUserText.includes('loop'));
    // Two tool calls ran, then the child stopped without another model call.
    expect(capped.at(-1)?.toolResults).toHaveLength(2);
    const tree = JSON.parse(call.result.stdout) as { agents: { status: string; tool_calls: number }[] };
    expect(tree.agents[0]).toMatchObject({ status: 'budget_exceeded', tool_calls: 2 });
    const byDefault = await seed([{ max_tool_calls: 9, task: 'loop' }], {
      lead: ['overrides = true', 'max_tool_calls = 1'],
    });
    const stopped = JSON.parse(byDefault.result.stdout) as {
      agents: { status: string; tool_calls: number }[];
    };
    expect(stopped.agents[0]).toMatchObject({ status: 'budget_exceeded', tool_calls: 1 });
  });

  it('read_only = true in a file: its own requests and its MCP tools without readOnlyHint', async () => {
    const { home, fake } = await setup();
    const server = JSON.stringify(process.execPath);
    home.agent(
      'auditor',
      agentToml('auditor', {
        extra: [
          'tools = ["read_file", "write_file", "edit_file", "run_command", "list_directory"]',
          'read_only = true',
          '',
          '[[mcp_servers]]',
          'name = "paged"',
          `command = ${server}`,
          `args = [${JSON.stringify(PAGED)}]`,
        ],
      }),
    );
    fake.respond(() => ({ text: 'audited' }));
    const result = await runAxe(['run', 'auditor', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'audited' });
    expect(toolNames(fake.requests[0])).toEqual(['read_file', 'list_directory', 'shout']);
    const dry = await runAxe(['run', 'auditor', '--agents-dir', home.agentsDir, '--dry-run'], {
      env: home.env(fake.url),
    });
    expect(dry.stdout).toContain('--- Tools ---\nread_file, list_directory\n');
  });
});
