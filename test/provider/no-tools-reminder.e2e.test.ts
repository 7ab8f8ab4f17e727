import { describe, expect, it } from 'vitest';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../fake-llm/bedrock-validate.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe } from '../run/cli.js';

/**
 * An agent with no tools whose model answered only with a tool call is told so in a user message,
 * right after the user's own: on a wire whose roles must alternate (Bedrock's Converse), the two
 * go as one user turn, which the API accepts.
 */
const setup = e2eHomes();

describe('the no-tools reminder on a wire whose roles alternate', () => {
  it('bedrock: the second request is accepted, one user turn holding the task and the reminder', async () => {
    const { home, fake } = await setup();
    home.agent('rock', agentToml('rock', { model: 'bedrock/anthropic.claude-3-5-sonnet-20240620-v1:0' }));
    fake.enqueue({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] });
    fake.enqueue({ text: 'sunny' });
    const env = home.env(undefined, {
      AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: FAKE_AWS_SECRET_ACCESS_KEY,
      AWS_REGION: 'eu-west-3',
      AXE_BEDROCK_BASE_URL: fake.url,
    });
    const result = await runAxe(['run', 'rock', '--agents-dir', home.agentsDir, '-p', 'weather?'], { env });
    expect(fake.rejections).toEqual([]);
    expect(result).toMatchObject({ code: 0, stdout: 'sunny', stderr: '' });
    expect(fake.requests).toHaveLength(2);
    const second = fake.requests[1]?.body as { messages: { role: string; content: { text?: string }[] }[] };
    expect(second.messages.map((m) => m.role)).toEqual(['user']);
    expect(second.messages[0]?.content.map((block) => block.text)).toEqual([
      'weather?',
      'Unknown tool: "get_weather". You have no tools: give your answer in plain text.',
    ]);
  });
});
