import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/index.js';
import type { FakeLlm, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { runAxe, TempHome } from './cli.js';

/** Edge cases of sub-agents and the conversation loop not covered by run.e2e.test.ts, at the CLI. */
let home: TempHome;
let fake: FakeLlm;

beforeAll(async () => {
  home = new TempHome();
  fake = await startFakeLlm();
});
afterAll(async () => {
  await fake.close();
  home.cleanup();
});

describe('sub-agent failures', () => {
  it('missing key, invalid model, 429, its own turn limit: error results in the spec words', async () => {
    home.agent('lead', agentToml('lead', { subAgents: ['keyless', 'badmodel', 'limited', 'looper'] }));
    home.agent('keyless', agentToml('keyless', { model: 'openai/gpt-test' }));
    home.agent('badmodel', agentToml('badmodel', { model: 'no-slash' }));
    home.agent('limited', agentToml('limited', { extra: ['[retry]', 'max_retries = 0'] }));
    home.agent('looper', agentToml('looper', { subAgents: ['limited'] }));
    fake.respond((request): ScriptedReply => {
      const role = roleOf(request);
      if (role === 'limited') return { fault: { kind: 'status', status: 429, message: 'slow down' } };
      if (role === 'looper') return { toolCalls: [{ name: 'noop', arguments: {} }] };
      const calls = ['keyless', 'badmodel', 'limited', 'looper'].map((name) => callAgent(name, 'go'));
      return delegatingParent(calls, 'carried on')(request);
    });
    // OpenAI at its own base URL, never reached: the missing key stops the call first (a loopback
    // base URL, like the fake's, needs no key).
    const env = home.env(fake.url, { OPENAI_API_KEY: '', AXE_OPENAI_BASE_URL: '' });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env,
    });
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout);
    expect(envelope.content).toBe('carried on');
    const outputs = envelope.tool_call_details.map((d: { output: string }) => d.output);
    const retry = 'You may retry or proceed without this result.';
    expect(outputs).toEqual([
      `Error: sub-agent "keyless" failed - API key for provider "openai" is not configured (set OPENAI_API_KEY or add to config.toml). ${retry}`,
      expect.stringMatching(
        /^call_agent error: invalid model for agent "badmodel": .*badmodel\.toml.*model: .*"no-slash"/,
      ),
      expect.stringMatching(
        new RegExp(`^Error: sub-agent "limited" failed - .*rate limited \\(HTTP 429\\).*\\. ${retry}$`),
      ),
      `Error: sub-agent "looper" failed - agent exceeded maximum conversation turns (50). ${retry}`,
    ]);
    expect(envelope.tool_call_details.every((d: { is_error: boolean }) => d.is_error)).toBe(true);
    expect(envelope.agents.map((a: { agent: string; status: string }) => `${a.agent}:${a.status}`)).toEqual([
      'keyless:error',
      'badmodel:error',
      'limited:error',
      'looper:max_turns',
    ]);
  });
});

describe('conversation loop', () => {
  it('ends on an empty answer with no tool calls: empty stdout, empty JSON content, exit 0', async () => {
    home.agent('quiet', agentToml('quiet', { subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper'));
    fake.respond(
      (request): ScriptedReply =>
        roleOf(request) === 'helper'
          ? { text: 'h' }
          : delegatingParent([callAgent('helper', 'x')], '')(request),
    );
    const args = ['run', 'quiet', '--agents-dir', home.agentsDir, '-p', 'x'];
    const env = home.env(fake.url);
    const [text, json] = await Promise.all([runAxe(args, { env }), runAxe([...args, '--json'], { env })]);
    expect(text).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: '', tool_calls: 1 });
  });
});

describe('retries in --json', () => {
  it('a top-level call that fails after retrying: its retries on stderr and in the envelope, exit 3', async () => {
    home.agent(
      'flaky',
      agentToml('flaky', {
        extra: ['[retry]', 'max_retries = 2', 'initial_delay_ms = 1', 'max_delay_ms = 5'],
      }),
    );
    fake.respond((): ScriptedReply => ({ fault: { kind: 'status', status: 503, message: 'busy' } }));
    const result = await runAxe(['run', 'flaky', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).error).toMatchObject({ kind: 'provider', exit_code: 3 });
    expect(result.stderr).toMatch(/after 2 retries/);
  });
});
