import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** With streaming on, sub-agents' text reaches `--events` as `text.delta` events, line by line. */
const setup = e2eHomes();

interface Delta {
  type: string;
  path: string;
  depth: number;
  text: string;
}

const WORKER_TEXT = 'reading the notes\nchecking part two\nall good';

function deltas(file: string): Delta[] {
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Delta)
    .filter((event) => event.type === 'text.delta');
}

async function spawning(stream: boolean) {
  const { home, fake } = await setup();
  home.agent('lead', agentToml('lead', { subAgentsConfig: ['spawn = true'] }));
  const isWorker = (request: RecordedRequest) => request.lastUserText.startsWith('job ');
  fake.respond((request) => {
    if (isWorker(request)) return { text: `${WORKER_TEXT} ${request.lastUserText}` };
    return request.toolResults.length === 0
      ? {
          toolCalls: [{ name: 'spawn_agents', arguments: { tasks: [{ task: 'job 1' }, { task: 'job 2' }] } }],
        }
      : { text: 'lead done' };
  });
  const events = path.join(home.root, 'events.jsonl');
  const result = await runAxe(
    [
      'run',
      'lead',
      '--agents-dir',
      home.agentsDir,
      '-p',
      'go',
      '--events',
      events,
      stream ? '--stream' : '--no-stream',
    ],
    { env: home.env(fake.url) },
  );
  return { result, events, workers: fake.requests.filter(isWorker) };
}

describe.concurrent('children stream', () => {
  it('spawn_agents workers stream with --stream: their text as text.delta events, one per line', async () => {
    const { result, events, workers } = await spawning(true);
    expect(result.code).toBe(0);
    // Only the lead's answer is on stdout; the workers' text is in the events.
    expect(result.stdout).toBe('lead done');
    expect(workers.map((w) => w.stream)).toEqual([true, true]);
    const children = deltas(events).filter((d) => d.depth === 1);
    for (const job of ['job 1', 'job 2']) {
      const mine = children.filter((d) => d.path.endsWith(`spawn_agents#1.${job.slice(-1)}:lead`));
      // The fake splits each answer into three pieces; the log gathers them into lines.
      expect(mine.map((d) => d.text)).toEqual([
        'reading the notes\n',
        'checking part two\n',
        `all good ${job}`,
      ]);
    }
  });

  it('without streaming, workers are not streamed and no child text is an event', async () => {
    const { result, events, workers } = await spawning(false);
    expect(result.code).toBe(0);
    expect(workers.map((w) => w.stream)).toEqual([false, false]);
    expect(deltas(events)).toEqual([]);
  });

  it('call_agent: a Go TOML child keeps Go bytes (not streamed); a Markdown child streams', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['gochild', 'mdchild'] }));
    home.agent('gochild', agentToml('gochild'));
    home.file('agents/mdchild.md', '---\nname: mdchild\nmodel: anthropic/claude-test\n---\nROLE:mdchild\n');
    const lead = delegatingParent([callAgent('gochild', 'a'), callAgent('mdchild', 'b')], 'merged');
    fake.respond((request) => (roleOf(request) === 'lead' ? lead(request) : { text: WORKER_TEXT }));
    const events = path.join(home.root, 'events.jsonl');
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--stream', '--events', events],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('merged');
    const streamed = (role: string) => fake.requests.filter((r) => roleOf(r) === role).map((r) => r.stream);
    expect(streamed('lead')).toEqual([true, true]);
    expect(streamed('gochild')).toEqual([false]);
    expect(streamed('mdchild')).toEqual([true]);
    const children = deltas(events).filter((d) => d.depth === 1);
    expect(children.map((d) => d.path)).toEqual(Array(3).fill('lead/call_agent#2:mdchild'));
    expect(children.map((d) => d.text).join('')).toBe(WORKER_TEXT);
  });
});
