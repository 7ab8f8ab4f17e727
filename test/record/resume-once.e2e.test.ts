import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe, startAxe, type TempHome, waitFor } from '../run/cli.js';

/**
 * `--resume` picks up an interruption at most once: one process at a time, and once a resume has
 * started the older run points to the newer one. A tool call whose result the transcript holds is
 * never run again.
 */
const setup = e2eHomes();

/** The run's transcripts so far: none yet while its record is being made. */
function transcript(home: TempHome, id: string): string {
  const dir = path.join(home.runsDir, id, 'agents');
  if (!existsSync(dir)) return '';
  return readdirSync(dir)
    .map((name) => readFileSync(path.join(dir, name), 'utf8'))
    .join('');
}

describe('--resume at most once', () => {
  it('a second --resume while one runs, and one after it ended, are refused; the recorded call is not run again', async () => {
    const { home, fake } = await setup();
    const log = path.join(home.root, 'side-effects.log');
    home.agent('appender', agentToml('appender', { extra: ['tools = ["run_command"]'] }));
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.respond(async (r): Promise<ScriptedReply> => {
      if (r.toolResults.length === 0) {
        return { toolCalls: [{ name: 'run_command', arguments: { command: 'echo x >> side-effects.log' } }] };
      }
      await gate;
      return { text: 'done' };
    });
    const env = home.env(fake.url);
    const first = startAxe(['run', 'appender', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: home.root,
    });
    // Killed once the command's result is in the transcript (the next model turn waits on the gate).
    await waitFor(() => {
      const [id] = home.runIds();
      return id !== undefined && transcript(home, id).includes('"role":"tool"');
    }, 30_000);
    first.kill('SIGKILL');
    await first.done;
    const [original] = home.runIds() as [string];
    expect(readFileSync(log, 'utf8')).toBe('x\n');

    const resuming = startAxe(['run', '--resume', original], { env });
    // The resumed run's model turn is in flight: the resume holds the run.
    await waitFor(() => fake.requests.length === 3, 30_000);
    const newer = home.runIds().find((id) => id !== original) as string;
    expect(newer).toBeDefined();
    const concurrent = await runAxe(['run', '--resume', original], { env });
    expect(concurrent.code).toBe(2);
    expect(concurrent.stderr).toBe(
      `axe: run ${original} is being resumed by process ${resuming.pid} (run ${newer})\n`,
    );
    expect(concurrent.stdout).toBe('');

    release();
    const resumed = await resuming.done;
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('done');
    const later = await runAxe(['run', '--resume', original], { env });
    expect(later.code).toBe(2);
    expect(later.stderr).toBe(
      `axe: run ${original} was resumed by run ${newer}; resume that run instead (axe run --resume ${newer})\n`,
    );
    // The older run's record says so.
    const shown = await runAxe(['runs', 'show', original], { env });
    expect(shown.stdout).toContain(`\nresumed by run ${newer}\n`);
    const listed = JSON.parse((await runAxe(['runs', 'list', '--json'], { env })).stdout);
    expect(listed).toContainEqual(expect.objectContaining({ id: original, resumed_by: newer }));
    // Neither refused resume sent anything; the recorded call ran once.
    expect(fake.requests).toHaveLength(3);
    expect(readFileSync(log, 'utf8')).toBe('x\n');
  });
});
