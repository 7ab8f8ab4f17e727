import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * A `result_format = "json"` result carries the sub-agent's wall-clock duration_seconds, which
 * no two runs share: the caller's next request must still replay from the cassette.
 */
const setup = e2eHomes();

interface Entry {
  key: string;
  agent: string;
  request: unknown;
  response?: { content: string };
}

const read = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Entry);
const write = (file: string, entries: Entry[]) =>
  writeFileSync(file, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
/** The duration_seconds in a JSON sub-agent result the fake server was sent. */
const took = (content = '') => Number(/"duration_seconds":([\d.]+),/.exec(content)?.[1]);

describe.concurrent('axe run --replay: a JSON sub-agent result', () => {
  it('replays whatever the sub-agent took; a changed prompt or sub-agent result still misses', async () => {
    const { home, fake } = await setup();
    home.agent(
      'jlead',
      agentToml('jlead', { subAgents: ['child'], subAgentsConfig: ['result_format = "json"'] }),
    );
    home.agent('child', agentToml('child'));
    fake.respond((request) =>
      roleOf(request) === 'child'
        ? { text: 'child answer', delayMs: 40 }
        : delegatingParent([callAgent('child', 'look')], 'lead answer')(request),
    );
    const cassette = path.join(home.root, 'j.jsonl');
    const args = ['run', 'jlead', '--agents-dir', home.agentsDir];
    const recorded = await runAxe([...args, '-p', 'go', '--record', cassette], { env: home.env(fake.url) });
    expect(recorded).toMatchObject({ code: 0, stdout: 'lead answer', stderr: '' });
    const asked = fake.requests.filter((r) => roleOf(r) === 'jlead').at(-1);
    expect(took(asked?.toolResults[0]?.content)).toBeGreaterThan(0);
    await fake.close();

    const offline = home.env(); // no key, no base URL
    const replay = (prompt: string, file = cassette) =>
      runAxe([...args, '-p', prompt, '--replay', file], { env: offline });
    expect(await replay('go')).toMatchObject({ code: 0, stdout: 'lead answer', stderr: '' });

    const miss = await replay('went');
    expect(miss).toMatchObject({ code: 3, stdout: '' });
    expect(miss.stderr).toContain('no recorded response for agent "jlead"');
    // It says what differs from the nearest request the agent made when recorded, and why that may be.
    expect(miss.stderr).toContain(
      'the nearest recorded request of "jlead" differs first in the user message (recorded 2 chars, "go", now 4 chars, "went"): the input differs: was the same stdin or -p given?',
    );

    // The child answers otherwise: the lead's second request (its tool result) is not the one recorded.
    const entries = read(cassette);
    const changed = path.join(home.root, 'changed.jsonl');
    write(
      changed,
      entries.map((entry) =>
        entry.response?.content === 'child answer'
          ? { ...entry, response: { ...entry.response, content: 'other answer' } }
          : entry,
      ),
    );
    const changedMiss = await replay('go', changed);
    expect(changedMiss).toMatchObject({ code: 3, stdout: '' });
    expect(changedMiss.stderr).toContain('no recorded response for agent "jlead"');
    expect(changedMiss.stderr).toContain(
      'differs first in the conversation after the user message (message 3, the tool results; recorded 3 messages, now 3): an earlier answer or tool result differs',
    );
    // Another model: said as such (the replay needs no key for it).
    const otherModel = await runAxe(
      [...args, '-p', 'go', '--replay', cassette, '--model', 'anthropic/claude-other'],
      {
        env: offline,
      },
    );
    expect(otherModel.code).toBe(3);
    expect(otherModel.stderr).toContain(
      'differs first in the model (recorded anthropic/claude-test, now anthropic/claude-other): was --model given',
    );

    // A cassette recorded before durations were left out of the key: the real duration in its
    // request, keyed by it.
    const old = path.join(home.root, 'old.jsonl');
    write(
      old,
      entries.map((entry) => {
        const text = JSON.stringify(entry.request).replace(
          /\\"duration_seconds\\":0,/,
          '\\"duration_seconds\\":0.043,',
        );
        return { ...entry, key: createHash('sha256').update(text).digest('hex'), request: JSON.parse(text) };
      }),
    );
    expect(readFileSync(old, 'utf8')).toContain('duration_seconds\\":0.043,');
    expect(await replay('go', old)).toMatchObject({ code: 0, stdout: 'lead answer', stderr: '' });
  });

  it("replays a background sub-agent's task_output result (JSON whatever result_format)", async () => {
    const { home, fake } = await setup();
    home.agent('blead', agentToml('blead', { subAgents: ['child'], subAgentsConfig: ['background = true'] }));
    home.agent('child', agentToml('child'));
    const launch = {
      ...callAgent('child', 'look'),
      arguments: { agent: 'child', task: 'look', run_in_background: true },
    };
    const collect = { name: 'task_output', arguments: { agent_id: 'blead/call_agent#1:child' } };
    fake.respond((request) =>
      roleOf(request) === 'child'
        ? { text: 'child answer', delayMs: 40 }
        : ([{ toolCalls: [launch] }, { toolCalls: [collect] }][request.toolResults.length] ?? {
            text: 'lead answer',
          }),
    );
    const cassette = path.join(home.root, 'b.jsonl');
    const args = ['run', 'blead', '--agents-dir', home.agentsDir, '-p', 'go'];
    const recorded = await runAxe([...args, '--record', cassette], { env: home.env(fake.url) });
    expect(recorded).toMatchObject({ code: 0, stdout: 'lead answer', stderr: '' });
    expect(took(fake.requests.at(-1)?.toolResults[1]?.content)).toBeGreaterThan(0);
    await fake.close();
    expect(await runAxe([...args, '--replay', cassette], { env: home.env() })).toMatchObject({
      code: 0,
      stdout: 'lead answer',
      stderr: '',
    });
  });
});
