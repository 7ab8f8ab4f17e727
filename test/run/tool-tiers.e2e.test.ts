import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';
import { interactiveRun } from './interactive-terminal.js';

/** Tool tiers, approvals and `[permissions]`: what runs, what is asked about, what is denied. */
const setup = e2eHomes();

const isApproval = (request: RecordedRequest) => request.lastUserText.includes('asks for approval');

/** An agent that makes `calls` in its first turn, then answers `done`. */
const calling =
  (calls: { name: string; arguments: Record<string, unknown> }[]) =>
  (request: RecordedRequest): ScriptedReply =>
    request.toolResults.length === 0 ? { toolCalls: calls } : { text: 'done' };

describe.concurrent('tool tiers and permissions', () => {
  it('[permissions]: a denied command never runs, an allowed one runs, any other is denied with no one to ask', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/keep.txt', 'keep');
    home.agent(
      'runner',
      agentToml('runner', {
        extra: [
          `workdir = "${workdir}"`,
          'tools = ["run_command"]',
          '[permissions]',
          'allow = ["echo hi", "cat keep.txt"]',
          'deny = ["rm"]',
        ],
      }),
    );
    const command = (c: string) => ({ name: 'run_command', arguments: { command: c } });
    fake.respond(
      calling([
        command('echo hi there'),
        command('rm keep.txt'),
        command('ls'),
        command('cat keep.txt; rm keep.txt'),
      ]),
    );
    const result = await runAxe(['run', 'runner', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const results = fake.requests[1]?.toolResults ?? [];
    expect(results[0]).toMatchObject({ content: expect.stringContaining('hi there'), isError: false });
    expect(results[1]).toMatchObject({
      content: 'run_command denied: the command matches [permissions] deny "rm"',
      isError: true,
    });
    expect(results[2]?.isError).toBe(true);
    expect(results[2]?.content).toMatch(
      /^run_command denied: the command matches no \[permissions\] allow rule, and no one can approve it/,
    );
    // A compound command is never allowed whole, and its `rm` is denied.
    expect(results[3]?.content).toContain('deny "rm"');
    expect(readFileSync(path.join(workdir, 'keep.txt'), 'utf8')).toBe('keep');
  });

  it('a call above the tier asks the caller model: yes runs it, no denies it with the reason', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/.keep', '');
    home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
    home.agent(
      'worker',
      agentToml('worker', {
        extra: [`workdir = "${workdir}"`, 'tools = ["read_file", "write_file"]', 'tier = "read"'],
      }),
    );
    const write = (file: string) => ({ name: 'write_file', arguments: { path: file, content: 'x' } });
    const lead = delegatingParent([callAgent('worker', 'write')], 'merged');
    const worker = calling([write('yes.txt'), write('no.txt')]);
    fake.respond((request) => {
      if (roleOf(request) === 'worker') return worker(request);
      if (isApproval(request)) {
        return request.lastUserText.includes('no.txt')
          ? { text: 'No. That file is not part of the task.' }
          : { text: '**Yes** — the task asks for it.' };
      }
      return lead(request);
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const asked = fake.requests.filter(isApproval);
    expect(asked).toHaveLength(2);
    expect(asked[0]?.lastUserText).toContain(
      'Your sub-agent "worker" asks for approval: may it call write_file on yes.txt? (write_file needs the "write" tier, above this agent\'s "read")',
    );
    // The side request offers no tools.
    expect(asked[0]?.toolNames).toEqual([]);
    const results = fake.requests.filter((r) => roleOf(r) === 'worker')[1]?.toolResults ?? [];
    expect(results[0]?.isError).toBe(false);
    expect(results[1]).toMatchObject({
      content: 'write_file denied by its caller "lead": That file is not part of the task.',
      isError: true,
    });
    expect(existsSync(path.join(workdir, 'yes.txt'))).toBe(true);
    expect(existsSync(path.join(workdir, 'no.txt'))).toBe(false);
  });

  it('a background child runs at the read tier: its write asks the caller; a foreground one writes', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/.keep', '');
    home.agent('lead', agentToml('lead', { subAgents: ['helper'], subAgentsConfig: ['background = true'] }));
    home.agent(
      'helper',
      agentToml('helper', { extra: [`workdir = "${workdir}"`, 'tools = ["write_file"]'] }),
    );
    const id = 'lead/call_agent#1:helper';
    fake.respond((request) => {
      if (roleOf(request) === 'helper') {
        const file = `${/(\w+)$/.exec(request.lastUserText)?.[1]}.txt`;
        return calling([{ name: 'write_file', arguments: { path: file, content: 'x' } }])(request);
      }
      if (isApproval(request)) return { text: 'No: background work only reads.' };
      switch (request.toolResults.length) {
        case 0:
          return {
            toolCalls: [
              { name: 'call_agent', arguments: { agent: 'helper', task: 'bg', run_in_background: true } },
              { name: 'call_agent', arguments: { agent: 'helper', task: 'fg' } },
            ],
          };
        case 2:
          return { toolCalls: [{ name: 'task_output', arguments: { agent_id: id } }] };
        default:
          return { text: 'lead done' };
      }
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const asked = fake.requests.filter(isApproval);
    expect(asked).toHaveLength(1);
    expect(asked[0]?.lastUserText).toContain('may it call write_file on bg.txt?');
    expect(asked[0]?.lastUserText).toContain('above this agent\'s "read"');
    const helperResults = fake.requests
      .filter((r) => roleOf(r) === 'helper' && r.toolResults.length > 0)
      .map((r) => r.toolResults[0]?.content);
    expect(helperResults).toContain('write_file denied by its caller "lead": background work only reads.');
    expect(existsSync(path.join(workdir, 'fg.txt'))).toBe(true);
    expect(existsSync(path.join(workdir, 'bg.txt'))).toBe(false);
  });

  it('--interactive at a terminal: the person answers the requests of the top-level agent and its children', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/.keep', '');
    const tools = [`workdir = "${workdir}"`, 'tools = ["write_file"]', 'tier = "read"'];
    home.agent('lead', agentToml('lead', { subAgents: ['worker'], extra: tools }));
    home.agent('worker', agentToml('worker', { extra: tools }));
    const write = (file: string) => ({ name: 'write_file', arguments: { path: file, content: 'x' } });
    const worker = calling([write('child.txt')]);
    fake.respond((request) => {
      if (roleOf(request) === 'worker') return worker(request);
      return request.toolResults.length === 0
        ? { toolCalls: [write('lead.txt'), callAgent('worker', 'write')] }
        : { text: 'lead done' };
    });
    // Each question is answered once: the echo of a typed answer can reach the screen after the
    // screen is looked at again, so the screen alone cannot say it was answered.
    const answered = new Set<string>();
    const terminal = interactiveRun(home, fake.url, [], (screen, t) => {
      const answer = (agent: string, file: string, text: string) => {
        if (answered.has(agent) || !screen.includes(`"${agent}" asks: may it call write_file on ${file}?`))
          return;
        answered.add(agent);
        t.type(text);
      };
      answer('lead', 'lead.txt', 'yes, lead.txt ok\r');
      answer('worker', 'child.txt', 'no, child.txt ok to skip\r');
    });
    expect(await terminal.done).toBe(0);
    expect(fake.requests.filter(isApproval)).toHaveLength(0);
    const childResult = fake.requests.filter((r) => roleOf(r) === 'worker')[1]?.toolResults[0];
    expect(childResult).toMatchObject({
      content: 'write_file denied by the person: child.txt ok to skip',
      isError: true,
    });
    expect(existsSync(path.join(workdir, 'lead.txt'))).toBe(true);
    expect(existsSync(path.join(workdir, 'child.txt'))).toBe(false);
  });

  it("Claude Code's Bash(git diff:*) becomes run_command with an allow rule; other commands ask the caller", async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/.keep', '');
    home.agent('lead', agentToml('lead', { subAgents: ['differ'] }));
    home.file(
      'agents/differ.md',
      `---\nname: differ\nmodel: anthropic/claude-test\ntools: Read, Bash(echo diff:*)\n---\nROLE:differ\n`,
    );
    home.file('config/axe/.keep', '');
    const lead = delegatingParent([callAgent('differ', 'diff')], 'merged');
    const differ = calling([
      { name: 'run_command', arguments: { command: 'echo diff --stat' } },
      { name: 'run_command', arguments: { command: 'echo push' } },
    ]);
    fake.respond((request) => {
      if (roleOf(request) === 'differ') return differ(request);
      if (isApproval(request)) return { text: 'no, only diffs' };
      return lead(request);
    });
    const dry = await runAxe(['agents', 'show', 'differ', '--agents-dir', home.agentsDir, '--json'], {
      env: home.env(fake.url),
      cwd: workdir,
    });
    expect(JSON.parse(dry.stdout)).toMatchObject({
      tools: ['read_file', 'run_command'],
      permissions: { allow: ['echo diff'], deny: [] },
    });
    const dryRun = await runAxe(['run', 'differ', '--agents-dir', home.agentsDir, '--dry-run'], {
      env: home.env(fake.url),
      cwd: workdir,
    });
    expect(dryRun.stdout).toContain('Allow:        echo diff\n');
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      cwd: workdir,
    });
    expect(result.code).toBe(0);
    const results = fake.requests.filter((r) => roleOf(r) === 'differ')[1]?.toolResults ?? [];
    expect(results[0]).toMatchObject({ content: expect.stringContaining('diff --stat'), isError: false });
    expect(results[1]).toMatchObject({
      content: 'run_command denied by its caller "lead": only diffs',
      isError: true,
    });
    expect(fake.requests.filter(isApproval)).toHaveLength(1);
  });
});
