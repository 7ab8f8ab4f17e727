import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
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
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual([`axe: the model gave no answer: refused or blocked (${reason})`]);
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
});
