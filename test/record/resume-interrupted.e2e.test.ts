import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from '../run/agents.js';
import { e2eHomes, runAxe, startAxe, type TempHome, waitFor } from '../run/cli.js';

/**
 * `--resume` of a run that Ctrl-C or `--timeout` ended: the calls of the turn it was in run again
 * (completed sub-agents reused), and the flags given with `--resume` mean what they say.
 */
const setup = e2eHomes();

function runJson(home: TempHome, id: string): { status: string; resumedFrom?: string } {
  return JSON.parse(readFileSync(path.join(home.runsDir, id, 'run.json'), 'utf8'));
}

/** `lead` calls `worker` on `a` and `slow` in one turn; `slow` hangs until `hanging` says not. */
function fanOut(home: TempHome, fake: { respond(fn: (r: RecordedRequest) => ScriptedReply): void }) {
  home.agent('worker', agentToml('worker'));
  home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
  const state = { hanging: true };
  fake.respond((r): ScriptedReply => {
    if (roleOf(r) === 'worker') {
      return r.lastUserText.includes('slow') && state.hanging
        ? { fault: { kind: 'hang' } }
        : { text: `done ${r.lastUserText}` };
    }
    if (r.toolResults.length === 0) return { toolCalls: ['a', 'slow'].map((t) => callAgent('worker', t)) };
    return { text: `lead: ${r.toolResults.map((t) => t.content).join(' | ')}` };
  });
  return state;
}

describe.concurrent('--resume of an interrupted run', () => {
  for (const how of ['SIGINT', '--timeout'] as const) {
    it(`ended by ${how} mid fan-out: the interrupted call runs again, the completed one is reused`, async () => {
      const { home, fake } = await setup();
      const state = fanOut(home, fake);
      const env = home.env(fake.url);
      // Long enough for axe to start and reach the fan-out on a busy machine; it then waits for
      // the hanging worker until the deadline.
      const extra = how === '--timeout' ? ['--timeout', '10'] : [];
      const events = path.join(home.root, 'events.jsonl');
      const axe = startAxe(
        ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--events', events, ...extra],
        { env },
      );
      const workers = () => fake.requests.filter((r) => roleOf(r) === 'worker');
      // axe has the finished worker's answer: its agent.end is in the event log.
      const workerEnded = () =>
        existsSync(events) &&
        readFileSync(events, 'utf8')
          .split('\n')
          .some((line) => line.includes('"type":"agent.end"') && line.includes('"agent":"worker"'));
      await waitFor(() => workers().length === 2 && workerEnded(), 20_000);
      if (how === 'SIGINT') axe.kill('SIGINT');
      const ended = await axe.done;
      expect(ended.code, ended.stderr).toBe(how === 'SIGINT' ? 130 : 3);
      const [first] = home.runIds();
      expect(runJson(home, first as string).status).toBe(how === 'SIGINT' ? 'cancelled' : 'timeout');
      state.hanging = false;
      const before = workers().length;
      const resumed = await runAxe(['run', '--resume', 'last'], { env });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toBe('lead: done Task: a | done Task: slow');
      // Only the worker that had not finished was asked again; the lead's first turn was not re-sent.
      expect(
        workers()
          .slice(before)
          .map((w) => w.lastUserText),
      ).toEqual(['Task: slow']);
      const leads = fake.requests.filter((r) => roleOf(r) === 'lead');
      expect(leads).toHaveLength(2);
      expect(leads[1]?.toolResults.map((t) => t.content)).toEqual(['done Task: a', 'done Task: slow']);
    });
  }

  it('Ctrl-C while the model turn after the calls was in flight: that turn is redone, no call runs again', async () => {
    const { home, fake } = await setup();
    home.agent('worker', agentToml('worker'));
    home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
    let hanging = true;
    fake.respond((r): ScriptedReply => {
      if (roleOf(r) === 'worker') return { text: `done ${r.lastUserText}` };
      if (r.toolResults.length === 0) return { toolCalls: ['a', 'b'].map((t) => callAgent('worker', t)) };
      if (hanging) return { fault: { kind: 'hang' } };
      return { text: `lead: ${r.toolResults.map((t) => t.content).join(' | ')}` };
    });
    const env = home.env(fake.url);
    const axe = startAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    const leads = () => fake.requests.filter((r) => roleOf(r) === 'lead');
    await waitFor(() => leads().length === 2);
    axe.kill('SIGINT');
    expect((await axe.done).code).toBe(130);
    hanging = false;
    const workers = fake.requests.filter((r) => roleOf(r) === 'worker').length;
    const resumed = await runAxe(['run', '--resume', 'last'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('lead: done Task: a | done Task: b');
    expect(fake.requests.filter((r) => roleOf(r) === 'worker')).toHaveLength(workers);
    // The request in flight is sent again, as it was.
    expect(leads()).toHaveLength(3);
    expect(leads()[2]?.body).toEqual(leads()[1]?.body);
  });

  it('--replay, --record and --events given with --resume are files of the shell’s directory; --replay is honoured', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead'));
    const ranIn = path.join(home.root, 'ran-here');
    const shell = path.join(home.root, 'shell');
    mkdirSync(ranIn);
    mkdirSync(shell);
    const env = home.env(fake.url);
    fake.respond(() => ({ fault: { kind: 'status', status: 400 } }));
    const failed = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: ranIn,
    });
    expect(failed.code).not.toBe(0);
    // A second run that failed the same way: a run is resumed once, and this one is resumed from
    // the cassette the first one's resume records.
    const again = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: ranIn,
    });
    expect(again.code).not.toBe(0);
    const [id, twin] = home.runIds() as [string, string];
    fake.respond(() => ({ text: 'finished live' }));
    const live = await runAxe(['run', '--resume', id, '--record', 'c1.jsonl', '--events', 'ev.jsonl'], {
      env,
      cwd: shell,
    });
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toBe('finished live');
    expect(existsSync(path.join(shell, 'c1.jsonl'))).toBe(true);
    expect(existsSync(path.join(shell, 'ev.jsonl'))).toBe(true);
    expect(readdirSync(ranIn)).toEqual([]);
    // The twin resumed from that cassette: no request reaches the server.
    fake.respond(() => ({ text: 'went live' }));
    const sent = fake.requests.length;
    const replayed = await runAxe(['run', '--resume', twin, '--replay', 'c1.jsonl'], { env, cwd: shell });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(replayed.stdout).toBe('finished live');
    expect(fake.requests).toHaveLength(sent);
    const newest = home.runIds().at(-1) as string;
    expect(runJson(home, newest)).toMatchObject({ resumedFrom: twin, status: 'completed' });
  });

  it('flags --resume cannot honour are refused, one line naming the flag', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead'));
    const env = home.env(fake.url);
    fake.respond(() => ({ fault: { kind: 'status', status: 400 } }));
    const failed = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(failed.code).not.toBe(0);
    const sent = fake.requests.length;
    for (const [flag, ...value] of [
      ['--model', 'anthropic/other'],
      ['--skill', 'skill.md'],
      ['--workdir', '/tmp'],
      ['--artifact-dir', 'out'],
      ['--agents-dir', home.agentsDir],
      ['--input', 'x=1'],
      ['--inputs-json', '{}'],
      ['--stdin-append'],
    ] as [string, ...string[]][]) {
      const refused = await runAxe(['run', '--resume', 'last', flag, ...value], { env });
      expect(refused.code, flag).toBe(2);
      expect(refused.stderr).toMatch(new RegExp(`^axe: --resume .*: ${flag} cannot be used with it\\n$`));
    }
    expect(fake.requests).toHaveLength(sent);
  });

  it('a run that replayed a cassette, resumed with --record: refused, as --record with --replay is', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead'));
    const env = home.env(fake.url);
    // A run that replays a cassette and fails: its cassette has no answer for its message.
    fake.respond(() => ({ text: 'ok' }));
    const cassette = path.join(home.root, 'c.jsonl');
    expect(
      (
        await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--record', cassette], {
          env,
        })
      ).code,
    ).toBe(0);
    const missed = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'other', '--replay', cassette],
      { env },
    );
    expect(missed.code).toBe(3);
    const refused = await runAxe(['run', '--resume', 'last', '--record', path.join(home.root, 'd.jsonl')], {
      env,
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /^axe: --resume: run \S+ replays .*c\.jsonl: --record cannot be used with it/,
    );
  });
});
