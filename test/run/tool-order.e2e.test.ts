import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedToolCall } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * The calls of one turn: those that change something run alone, in call order; read-only calls
 * and sub-agent calls still overlap.
 */
const setup = e2eHomes();

async function turn(calls: ScriptedToolCall[]) {
  const { home, fake } = await setup();
  const work = home.file('work/notes.txt', 'old text\n');
  home.agent(
    'lead',
    agentToml('lead', {
      extra: [`workdir = "${path.dirname(work)}"`, 'tools = ["read_file", "edit_file", "write_file"]'],
      subAgents: ['slow'],
    }),
  );
  home.agent('slow', agentToml('slow'));
  fake.respond((request) => {
    if (roleOf(request) === 'slow') return { text: `slow: ${request.lastUserText}`, delayMs: 300 };
    return request.toolResults.length === 0 ? { toolCalls: calls } : { text: 'done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
    env: home.env(fake.url),
  });
  expect(result).toMatchObject({ code: 0, stdout: 'done' });
  const last = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1);
  const children = fake.requests.filter((r) => roleOf(r) === 'slow');
  return { results: last?.toolResults ?? [], children };
}

const served = (r: RecordedRequest | undefined) => ({ from: r?.receivedAt ?? 0, to: r?.finishedAt ?? 0 });

describe.concurrent('tool calls of one turn', () => {
  it('edit_file then read_file of the same file: the read sees the edit', async () => {
    const { results } = await turn([
      { name: 'edit_file', arguments: { path: 'notes.txt', old_string: 'old text', new_string: 'new text' } },
      { name: 'read_file', arguments: { path: 'notes.txt' } },
    ]);
    expect(results.map((r) => r.isError)).toEqual([false, false]);
    expect(results[1]?.content).toContain('new text');
    expect(results[1]?.content).not.toContain('old text');
  });

  it('sub-agent calls overlap; a write between them waits for the first and holds back the second', async () => {
    const parallel = await turn([callAgent('slow', 'a'), callAgent('slow', 'b')]);
    const [a, b] = parallel.children.map(served);
    expect(b?.from).toBeLessThan(a?.to ?? 0);

    const ordered = await turn([
      callAgent('slow', 'a'),
      { name: 'write_file', arguments: { path: 'out.txt', content: 'x' } },
      callAgent('slow', 'b'),
    ]);
    expect(ordered.results.map((r) => r.isError)).toEqual([false, false, false]);
    const [first, second] = ordered.children.map(served);
    expect(second?.from).toBeGreaterThanOrEqual(first?.to ?? Number.POSITIVE_INFINITY);
  });
});
