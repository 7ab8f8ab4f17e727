import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** `explore` and `plan`, built into axe: named in sub_agents with no file; a user's file wins. */
const setup = e2eHomes();

const isExplorer = (r: RecordedRequest) => r.system.startsWith('You are a fast, focused codebase explorer.');
const isPlanner = (r: RecordedRequest) => r.system.startsWith('You are a software architect');

async function seed(extraAgents: Record<string, string> = {}) {
  const { home, fake } = await setup();
  const work = home.file('work/a.txt', 'x');
  home.agent(
    'lead',
    agentToml('lead', { extra: [`workdir = "${path.dirname(work)}"`], subAgents: ['explore', 'plan'] }),
  );
  for (const [name, toml] of Object.entries(extraAgents)) home.agent(name, toml);
  fake.respond((request) => {
    if (roleOf(request) !== 'lead' || isExplorer(request) || isPlanner(request)) return { text: 'sub done' };
    return request.toolResults.length === 0
      ? {
          text: 'Splitting the work.',
          toolCalls: [callAgent('explore', 'map it'), callAgent('plan', 'plan it')],
        }
      : { text: 'lead done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
    env: home.env(fake.url),
  });
  return { home, fake, result };
}

describe.concurrent('built-in agents', () => {
  it('explore and plan run with no agent file: read-only tools, the caller model, plan forks', async () => {
    const { fake, result } = await seed();
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const explore = fake.requests.find(isExplorer);
    expect(explore?.toolNames).toEqual(['list_directory', 'read_file', 'glob_files', 'grep_files']);
    expect(explore?.model).toBe('claude-test');
    expect(explore?.lastUserText).toBe('Task: map it');
    const plan = fake.requests.find(isPlanner);
    expect(plan?.lastUserText).toContain('### FORKING CONVERSATION CONTEXT ###');
    expect(JSON.stringify(plan?.body)).toContain('Splitting the work.');
  });

  it("a user's explore file wins over the built-in one", async () => {
    const { fake, result } = await seed({ explore: agentToml('explore') });
    expect(result.code).toBe(0);
    expect(fake.requests.filter(isExplorer)).toHaveLength(0);
    expect(fake.requests.some((r) => roleOf(r) === 'explore')).toBe(true);
  });

  it('agents list shows them only with --all, marked; show works; edit refuses', async () => {
    const { home } = await setup();
    const env = home.env();
    const plain = await runAxe(['agents', 'list', '--agents-dir', home.agentsDir], { env });
    expect(plain).toMatchObject({ code: 0, stdout: '' });
    const all = await runAxe(['agents', 'list', '--all', '--agents-dir', home.agentsDir], { env });
    expect(all.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^explore - .* \(built-in\)$/),
      expect.stringMatching(/^plan - .* \(built-in\)$/),
    ]);
    const show = await runAxe(['agents', 'show', 'plan', '--agents-dir', home.agentsDir], { env });
    expect(show.stdout).toMatch(/^Name: {11}plan\n/);
    const edit = await runAxe(['agents', 'edit', 'explore', '--agents-dir', home.agentsDir], {
      env: { ...env, EDITOR: 'true' },
    });
    expect(edit).toMatchObject({
      code: 2,
      stderr:
        'axe: agent "explore" is built into axe: to change it, write your own explore file in an agents directory (yours wins)\n',
    });
  });
});
