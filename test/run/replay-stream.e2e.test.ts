import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, lines, REPO_ROOT, runAxe, startAxe } from './cli.js';

/** `axe run` end to end: record / replay, the shipped example, streaming. */
const setup = e2eHomes();

describe.concurrent('axe run: cassettes and streaming', () => {
  it('replays a recorded run identically with the server gone; a miss exits 3 naming the agent', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['a', 'b'] }));
    home.agent('a', agentToml('a')).agent('b', agentToml('b'));
    fake.respond((request) => {
      const role = roleOf(request);
      if (role === 'a') return { text: 'from a', delayMs: 50 };
      if (role === 'b') return { text: 'from b' };
      return delegatingParent([callAgent('a', 'one'), callAgent('b', 'two')], 'merged a+b')(request);
    });
    const cassette = path.join(home.root, 'run.cassette.jsonl');
    const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'review'];
    const recorded = await runAxe([...args, '--record', cassette], { env: home.env(fake.url) });
    expect(recorded).toMatchObject({ code: 0, stdout: 'merged a+b' });
    expect(readFileSync(cassette, 'utf8')).not.toContain('test-key');
    await fake.close();

    const offline = home.env(); // no key, no base URL
    const replays = await Promise.all([
      runAxe([...args, '--replay', cassette], { env: offline }),
      runAxe([...args, '--replay', cassette], { env: offline }),
    ]);
    for (const replay of replays) expect(replay).toMatchObject({ code: 0, stdout: 'merged a+b', stderr: '' });

    const miss = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'other', '--replay', cassette],
      {
        env: offline,
      },
    );
    expect(miss.code).toBe(3);
    expect(miss.stdout).toBe('');
    expect(lines(miss.stderr)).toHaveLength(1);
    expect(miss.stderr).toContain('agent "lead"');
  });

  it('Anthropic: the system prompt as a string, as Go sends it; a cached block with [params] prompt_caching, which cassettes ignore', async () => {
    const { home, fake } = await setup();
    home.agent('plain', agentToml('plain'));
    home.agent('cached', agentToml('cached', { extra: ['', '[params]', 'prompt_caching = true'] }));
    fake.respond(() => ({ text: 'answer' }));
    const run = (agent: string, ...flags: string[]) =>
      runAxe(['run', agent, '--agents-dir', home.agentsDir, '-p', 'go', ...flags], {
        env: home.env(fake.url),
      });
    expect(await run('plain')).toMatchObject({ code: 0, stdout: 'answer' });
    const cassette = path.join(home.root, 'cached.cassette.jsonl');
    expect(await run('cached', '--record', cassette)).toMatchObject({ code: 0, stdout: 'answer' });
    const systems = fake.requests.map((request) => (request.body as { system: unknown }).system);
    expect(systems).toEqual([
      'ROLE:plain',
      [{ type: 'text', text: 'ROLE:cached', cache_control: { type: 'ephemeral' } }],
    ]);
    // The same question without caching is answered from the cassette: caching changes no answer.
    home.agent('cached', agentToml('cached'));
    const replayed = await runAxe(
      ['run', 'cached', '--agents-dir', home.agentsDir, '-p', 'go', '--replay', cassette],
      {
        env: home.env(),
      },
    );
    expect(replayed).toMatchObject({ code: 0, stdout: 'answer', stderr: '' });
  });

  it('streams a tool-using agent as it arrives (lead-in set apart); --no-stream prints the answer only', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'], extra: ['stream = true'] }));
    home.agent('helper', agentToml('helper'));
    fake.respond((request) =>
      roleOf(request) === 'helper'
        ? { text: 'helper text' }
        : request.toolResults.length === 0
          ? { text: "I'll delegate.", toolCalls: [callAgent('helper', 'x')] }
          : { text: 'streamed final answer', chunkDelayMs: 250 },
    );
    const env = home.env(fake.url);
    const base = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x'];
    const fromFile = startAxe(base, { env });
    const noStream = runAxe([...base, '--no-stream'], { env });
    // Live streaming shows the lead-in of the tool-calling turn too, set apart from the answer;
    // without streaming stdout is exactly the final answer.
    expect(await fromFile.done).toMatchObject({
      code: 0,
      stdout: "I'll delegate.\n\nstreamed final answer",
    });
    // Part of the answer was on stdout while the server was still sending the rest.
    const streamedFinal = fake.requests.find((r) => r.stream && r.toolResults.length > 0);
    expect(fromFile.firstStdoutAt()).toBeLessThan(streamedFinal?.finishedAt ?? 0);
    expect(await noStream).toMatchObject({ code: 0, stdout: 'streamed final answer' });
    const leadStreams = fake.requests.filter((r) => roleOf(r) === 'lead').map((r) => r.stream);
    expect(leadStreams.filter(Boolean)).toHaveLength(2);
    expect(leadStreams.filter((s) => !s)).toHaveLength(2);
  });

  it("runs the shipped example offline, with no key, the same every time (the README's main job)", async () => {
    const { home } = await setup();
    // npx axe run team-lead --agents-dir agents/examples \
    //   --replay agents/examples/review.cassette.jsonl < agents/examples/sample.diff
    const args = [
      'run',
      'team-lead',
      '--agents-dir',
      'agents/examples',
      '--replay',
      'agents/examples/review.cassette.jsonl',
    ];
    const diff = readFileSync(path.join(REPO_ROOT, 'agents/examples/sample.diff'), 'utf8');
    const offline = home.env(); // no key, no base URL: any network attempt would fail the run
    const runs = await Promise.all(
      [0, 1, 2].map(() => runAxe(args, { env: offline, cwd: REPO_ROOT, stdin: diff })),
    );
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '', stdout: runs[0]?.stdout });
    expect(runs[0]?.stdout).toMatch(/^\*\*Verdict: REQUEST CHANGES\*\*\n/);
    expect(runs[0]?.stdout).toContain('SQL injection');
    expect(runs[0]?.stdout).toContain('Swallowed error');
  });

  it('the spawn_agents and delegate_task examples replay offline too', async () => {
    const { home } = await setup();
    const diff = readFileSync(path.join(REPO_ROOT, 'agents/examples/sample.diff'), 'utf8');
    const replay = (agent: string, cassette: string) =>
      runAxe(
        [
          'run',
          agent,
          '--agents-dir',
          'agents/examples',
          '--replay',
          `agents/examples/${cassette}`,
          '--json',
        ],
        { env: home.env(), cwd: REPO_ROOT, stdin: diff },
      );
    const [audit, plan] = await Promise.all([
      replay('auditor', 'audit.cassette.jsonl'),
      replay('fix-planner', 'fix-plan.cassette.jsonl'),
    ]);
    expect(audit).toMatchObject({ code: 0, stderr: '' });
    const audited = JSON.parse(audit.stdout) as { content: string; agents: { agent: string }[] };
    expect(audited.content).toMatch(/^Nine findings from three angles/);
    expect(audited.agents.map((a) => a.agent)).toEqual(['auditor', 'auditor', 'auditor']);
    expect(plan).toMatchObject({ code: 0, stderr: '' });
    const planned = JSON.parse(plan.stdout) as { content: string; agents: { agent: string }[] };
    expect(planned.content).toMatch(/^Seven fixes, the committed token first\./);
    expect(planned.agents.map((a) => a.agent)).toEqual([
      'security-reviewer',
      'style-reviewer',
      'fix-planner',
    ]);
  });
});
