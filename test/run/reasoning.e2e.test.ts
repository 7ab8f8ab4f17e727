import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** The loop keeps each turn's reasoning and sends it back, so thinking models survive tool loops. */
const setup = e2eHomes();

describe.concurrent('reasoning through the loop', () => {
  it('a DeepSeek thinking-mode tool loop: reasoning_content goes back, [params] reasoning_effort is sent', async () => {
    const { home, fake } = await setup();
    home.agent(
      'thinker',
      agentToml('thinker', {
        model: 'openai/deepseek-reasoner',
        extra: ['tools = ["list_directory"]', '[params]', 'reasoning_effort = "low"'],
      }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? {
            reasoning: 'I should list the files.',
            toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }],
          }
        : { text: 'done' },
    );
    const args = ['run', 'thinker', '--agents-dir', home.agentsDir, '-p', 'x', '--workdir', home.agentsDir];
    const result = await runAxe(args, { env: home.env(fake.url) });
    expect(result).toMatchObject({ code: 0, stdout: 'done', stderr: '' });
    expect(fake.rejections).toEqual([]);
    const second = fake.requests[1]?.body as {
      reasoning_effort: string;
      messages: Record<string, unknown>[];
    };
    expect(second.reasoning_effort).toBe('low');
    expect(second.messages.find((m) => m.role === 'assistant')?.reasoning_content).toBe(
      'I should list the files.',
    );
  });

  it('Anthropic extended thinking: [params] thinking_budget, thinking blocks back with their signatures', async () => {
    const { home, fake } = await setup();
    home.agent(
      'thinker',
      agentToml('thinker', {
        extra: ['tools = ["list_directory"]', '[params]', 'thinking_budget = 1024', 'max_tokens = 4096'],
      }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? {
            thinking: { text: 'List first.', signature: 'sig-abc' },
            toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }],
          }
        : { text: 'done' },
    );
    const args = ['run', 'thinker', '--agents-dir', home.agentsDir, '-p', 'x', '--workdir', home.agentsDir];
    const result = await runAxe([...args, '--stream'], { env: home.env(fake.url) });
    expect(result).toMatchObject({ code: 0, stdout: 'done', stderr: '' });
    expect(fake.rejections).toEqual([]);
  });

  it('xAI-style reasoning tokens beside completion_tokens count as output: budget, --json, --verbose', async () => {
    const { home, fake } = await setup();
    home.agent(
      'grok',
      agentToml('grok', { model: 'openai/grok-4', extra: ['[budget]', 'max_tokens = 100'] }),
    );
    const reply = { text: '4', usage: { input: 20, output: 150, reasoning: 128, reasoningBeside: true } };
    fake.enqueue(reply, reply);
    const args = ['run', 'grok', '--agents-dir', home.agentsDir, '-p', '2+2'];
    const json = await runAxe([...args, '--json'], { env: home.env(fake.url) });
    // 20 + 150 is over the budget of 100 (counting completion_tokens alone, 20 + 22 was not).
    expect(json.code).toBe(4);
    const verbose = await runAxe(args.concat('--verbose'), { env: home.env(fake.url) });
    expect(verbose.stderr).toContain('Tokens:   20 input, 150 output (cumulative, budget: 170/100)');
    expect(verbose.stderr).toContain('Reasoning: 128 of the output tokens');
    home.agent('free', agentToml('free', { model: 'openai/grok-4' }));
    fake.enqueue(reply);
    const free = await runAxe(['run', 'free', '--agents-dir', home.agentsDir, '-p', '2+2', '--json'], {
      env: home.env(fake.url),
    });
    expect(JSON.parse(free.stdout)).toMatchObject({ output_tokens: 150, reasoning_tokens: 128 });
  });
});
