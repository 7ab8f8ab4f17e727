import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { AXE_BIN, e2eHomes, runAxe, waitFor } from '../run/cli.js';
import { skipBecause } from '../skip.js';

/**
 * The reviewer's repros through the built CLI: a run killed in a pid namespace of its own (as in a
 * container, axe is pid 1 there) is not "running" for ever because pid 1 is alive outside; a run
 * of `./bot.md` continues as `proj/bot.md` or by its absolute path.
 */
const setup = e2eHomes();

/** `unshare -pf --mount-proc` works here (root, or user namespaces allowed). */
const canUnshare =
  process.platform === 'linux' &&
  spawnSync('unshare', ['-pf', '--mount-proc', '--kill-child', 'true'], { stdio: 'ignore' }).status === 0;

describe.concurrent('run records and the process that made them', () => {
  it('a run SIGKILLed as pid 1 of its own pid namespace is interrupted outside it (pid 1 is alive there): runs list, --resume, pruning', async (context) => {
    if (!canUnshare)
      return skipBecause(
        context,
        'needs a pid namespace (unshare -pf --mount-proc), which this system refuses',
      );
    const { home, fake } = await setup();
    home.agent('bot', agentToml('bot'));
    const state = { hanging: true };
    fake.respond((): ScriptedReply => (state.hanging ? { fault: { kind: 'hang' } } : { text: 'finished' }));
    const env = home.env(fake.url);
    // --kill-child: SIGKILL to unshare is SIGKILL to axe (pid 1 inside), with its whole namespace.
    const inside = spawn(
      'unshare',
      [
        '-pf',
        '--mount-proc',
        '--kill-child',
        process.execPath,
        AXE_BIN,
        'run',
        'bot',
        '--agents-dir',
        home.agentsDir,
        '-p',
        'go',
      ],
      { env, stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => inside.on('close', resolve));
    await waitFor(() => fake.requests.length === 1);
    const [id] = home.runIds();
    const record = JSON.parse(readFileSync(path.join(home.runsDir, id as string, 'run.json'), 'utf8'));
    expect(record.pid).toBe(1);
    expect(record.process.startTicks).toEqual(expect.any(Number));
    expect(record.status).toBe('running');
    inside.kill('SIGKILL');
    await exited;
    // The namespace's processes are gone once its pid 1 is: wait for the fake to see the request end.
    await waitFor(() => (fake.requests[0] as RecordedRequest).finishedAt !== undefined);

    const list = await runAxe(['runs', 'list'], { env });
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+bot\\s.*\\sinterrupted\\s`));
    state.hanging = false;
    const resumed = await runAxe(['run', '--resume', id as string], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('finished');
    // `[runs] keep = 1` after the resumed run: the killed run goes.
    home.file('config/axe/config.toml', '[runs]\nkeep = 1\n');
    const third = await runAxe(['run', 'bot', '--agents-dir', home.agentsDir, '-p', 'again'], { env });
    expect(third.code, third.stderr).toBe(0);
    expect(home.runIds()).not.toContain(id);
    expect(home.runIds()).toHaveLength(1);
  });

  it('a run of ./bot.md continues as proj/bot.md and by its absolute path; another file is refused', async () => {
    const { home, fake } = await setup();
    const md = (name: string) => `---\nname: ${name}\nmodel: anthropic/claude-test\n---\nROLE:${name}\n`;
    const bot = home.file('proj/bot.md', md('bot'));
    home.file('proj/other.md', md('other'));
    fake.respond((r) => ({ text: `heard ${r.lastUserText}` }));
    const env = home.env(fake.url);
    const proj = path.join(home.root, 'proj');
    const first = await runAxe(['run', './bot.md', '-p', 'one'], { env, cwd: proj });
    expect(first.code, first.stderr).toBe(0);
    const fromParent = await runAxe(['run', 'proj/bot.md', '--continue', '-p', 'two'], {
      env,
      cwd: home.root,
    });
    expect(fromParent.code, fromParent.stderr).toBe(0);
    const absolute = await runAxe(['run', bot, '--continue', '-p', 'three'], { env, cwd: home.root });
    expect(absolute.code, absolute.stderr).toBe(0);
    const body = fake.requests.at(-1)?.body as { messages: { role: string; content: unknown }[] };
    const text = (c: unknown) =>
      typeof c === 'string' ? c : (c as { text: string }[]).map((b) => b.text).join('');
    expect(body.messages.map((m) => `${m.role}:${text(m.content)}`)).toEqual([
      'user:one',
      'assistant:heard one',
      'user:two',
      'assistant:heard two',
      'user:three',
    ]);
    const [, , newest] = home.runIds();
    const other = await runAxe(['run', 'proj/other.md', '--continue', newest as string, '-p', 'x'], {
      env,
      cwd: home.root,
    });
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      `axe: --continue: run ${newest} is a run of "${bot}", not "proj/other.md" (axe run ${bot} --continue ${newest})\n`,
    );
  });
});
