import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `fork_context = true`: the sub-agent's first request holds its caller's finished turns, the
 * fork's boundary message and the task, and no tool call without its result — on the caller's
 * wire or another.
 */
const setup = e2eHomes();

const BOUNDARY_START = '### FORKING CONVERSATION CONTEXT ###\n### ENTERING SUB-AGENT ROUTINE ###';

type AnthropicBlock = { type: string; text?: string; name?: string; id?: string; tool_use_id?: string };
type AnthropicMessage = { role: string; content: string | AnthropicBlock[] };

/** lead: reads notes.txt, then says why and calls the child; the child answers at once. */
function lead(request: RecordedRequest): ScriptedReply {
  if (request.toolResults.length === 0)
    return { text: 'Reading first.', toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] };
  if (request.toolResults.length === 1)
    return {
      text: 'Handing the summary to the child.',
      toolCalls: [{ name: 'call_agent', arguments: { agent: 'child', task: 'summarise the notes' } }],
    };
  return { text: 'lead done' };
}

async function seed(child: { model?: string; extra: string[] }) {
  const { home, fake } = await setup();
  const work = home.file('work/notes.txt', 'the milk');
  const workdir = path.dirname(work);
  home.agent(
    'lead',
    agentToml('lead', { extra: [`workdir = "${workdir}"`, 'tools = ["read_file"]'], subAgents: ['child'] }),
  );
  home.agent(
    'child',
    agentToml('child', {
      ...(child.model ? { model: child.model } : {}),
      extra: [`workdir = "${workdir}"`, ...child.extra],
    }),
  );
  fake.respond((request) => (roleOf(request) === 'lead' ? lead(request) : { text: 'child summary' }));
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
    env: home.env(fake.url),
  });
  const first = fake.requests.find((r) => roleOf(r) === 'child');
  return { result, first, fake };
}

describe.concurrent('forked context', () => {
  it("the child's first request: the caller's resolved turns, the boundary, then the task", async () => {
    const { result, first } = await seed({ extra: ['fork_context = true', 'tools = ["read_file"]'] });
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    expect(first?.rejection).toBeUndefined();
    const messages = (first?.body as { messages: AnthropicMessage[] } | undefined)?.messages ?? [];
    const shape = messages.map((m) =>
      typeof m.content === 'string'
        ? `${m.role}:text`
        : `${m.role}:${m.content.map((b) => (b.type === 'tool_use' ? `tool_use(${b.name})` : b.type)).join('+')}`,
    );
    // The turn that calls the child is cut back to its text: no call_agent tool_use is left dangling.
    expect(shape).toEqual([
      'user:text',
      'assistant:text+tool_use(read_file)',
      'user:tool_result',
      'assistant:text',
      'user:text',
    ]);
    expect(JSON.stringify(messages)).not.toContain('call_agent');
    expect(messages[3]?.content).toEqual([{ type: 'text', text: 'Handing the summary to the child.' }]);
    const last = messages[4]?.content as string;
    expect(last.startsWith(BOUNDARY_START)).toBe(true);
    expect(last).toContain('- Only complete the specific sub-agent task you have been assigned below.\n\n');
    expect(last.endsWith('summarise the notes')).toBe(true);
  });

  it('a child on another wire gets the same conversation in its own terms', async () => {
    const { first } = await seed({
      model: 'openai/gpt-test',
      extra: ['fork_context = true', 'tools = ["read_file"]'],
    });
    expect(first?.wire).toBe('openai');
    expect(first?.rejection).toBeUndefined();
    type OpenAiMessage = { role: string; content?: string; tool_calls?: unknown[] };
    const messages = (first?.body as { messages: OpenAiMessage[] } | undefined)?.messages ?? [];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(messages[2]?.tool_calls).toHaveLength(1);
    expect(messages[5]?.content?.endsWith('summarise the notes')).toBe(true);
  });

  it('a child without tools reads the calls as text; without fork_context it gets the task alone', async () => {
    const told = await seed({ extra: ['fork_context = true'] });
    expect(told.first?.rejection).toBeUndefined();
    expect(told.first?.toolNames).toEqual([]);
    const body = JSON.stringify(told.first?.body);
    expect(body).not.toContain('"type":"tool_use"');
    expect(body).toContain('[called read_file {\\"path\\":\\"notes.txt\\"}]');
    expect(body).toContain('[read_file returned]\\n1: the milk');

    const alone = await seed({ extra: ['tools = ["read_file"]'] });
    expect((alone.first?.body as { messages: unknown[] } | undefined)?.messages).toEqual([
      { role: 'user', content: 'Task: summarise the notes' },
    ]);
  });
});
