import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/** Refusals and safety blocks are visible: `refused` in --json, and no empty success. */
const setup = e2eHomes();

describe.concurrent('refusals and safety blocks', () => {
  it.each([
    ['openai/gpt-x', { refusal: "I can't help with that." }, "I can't help with that."],
    ['google/gemini-x', { stopReason: 'SAFETY' }, 'SAFETY'],
    ['anthropic/claude-x', { stopReason: 'refusal' }, 'refusal'],
  ])('%s with no answer: one line, exit 1, never an empty success', async (model, reply, reason) => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker', { model }));
    fake.enqueue(reply);
    const env = home.env(fake.url, { AXE_GOOGLE_BASE_URL: fake.url, GEMINI_API_KEY: 'test-key' });
    const result = await runAxe(['run', 'asker', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env,
    });
    expect(result.code).toBe(1);
    const message = `the model gave no answer: refused or blocked (${reason})`;
    expect(JSON.parse(result.stdout)).toMatchObject({
      content: '',
      refused: true,
      error: { kind: 'refusal', message, exit_code: 1 },
    });
    expect(lines(result.stderr)).toEqual([`axe: ${message}`]);
  });

  it('a partial answer that was then blocked prints, with refused: true and the reason in --json and --verbose', async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    fake.respond(() => ({ text: 'Here is the start', stopReason: 'refusal' }));
    const args = ['run', 'asker', '--agents-dir', home.agentsDir, '-p', 'x'];
    const json = await runAxe([...args, '--json'], { env: home.env(fake.url) });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      content: 'Here is the start',
      refused: true,
      refusal: 'refusal',
    });
    const verbose = await runAxe([...args, '-v'], { env: home.env(fake.url) });
    expect(verbose.stderr).toMatch(/^Refused: {2}refusal$/m);
  });

  it('an agent with no tools that answers with a tool call is told it has none, once; then answers', async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    fake.enqueue({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    fake.enqueue({ text: 'sunny' });
    const result = await runAxe(['run', 'asker', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'sunny', stderr: '' });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]?.toolNames).toEqual([]);
    expect(fake.requests[1]?.lastUserText).toBe(
      'Unknown tool: "get_weather". You have no tools: give your answer in plain text.',
    );
  });

  it('a model that only calls tools the agent does not have: exit 1, and a failed sub-agent, never ""', async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    home.agent('lead', agentToml('lead', { subAgents: ['asker'] }));
    const stray = { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
    fake.respond((request) => {
      if (roleOf(request) === 'asker') return stray;
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('asker', 'go')] }
        : { text: 'lead done' };
    });
    const env = home.env(fake.url);
    const alone = await runAxe(['run', 'asker', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env,
    });
    expect(alone.code).toBe(1);
    expect(JSON.parse(alone.stdout).error).toMatchObject({ kind: 'runtime', exit_code: 1 });
    expect(lines(alone.stderr)).toEqual(['axe: the model gave no answer']);
    const led = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], { env });
    expect(led.code).toBe(0);
    const parentSaw = fake.requests.find((r) => roleOf(r) === 'lead' && r.toolResults.length > 0);
    expect(parentSaw?.toolResults[0]).toMatchObject({ isError: true });
    expect(parentSaw?.toolResults[0]?.content).toContain('the model gave no answer');
    const tree = JSON.parse(led.stdout) as { agents: { agent: string; status: string }[] };
    expect(tree.agents.map((a) => `${a.agent}:${a.status}`)).toEqual(['asker:error']);
  });
});
