import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../fake-llm/types.js';
import { smallDisk } from '../fs/small-disk.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe, startAxe, waitFor } from '../run/cli.js';
import { skipBecause } from '../skip.js';

/**
 * A run on a full data disk: finished means recorded as finished, or said not to be (and then it
 * never looks resumable); a record that cannot be made leaves no directory behind.
 */
const setup = e2eHomes();

/** Writes `file` until the disk has no room left. */
function fill(file: string): void {
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(4096, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  // What a page's rest still takes.
  const tail = openSync(file, 'a');
  try {
    for (;;) writeSync(tail, Buffer.alloc(1));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(tail);
  }
}

describe('a run record on a full disk', () => {
  it('the disk fills during the run: exit 0, one warning, and the run is listed as ended, not resumable', async (context) => {
    const disk = smallDisk('2m');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const { home, fake } = await setup();
      home.agent('bot', agentToml('bot'));
      let release = (): void => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      fake.respond(async (): Promise<ScriptedReply> => {
        await gate;
        return { text: 'answer' };
      });
      const env = home.env(fake.url, { XDG_DATA_HOME: disk.inside });
      const runs = path.join(disk.root, 'axe', 'runs');
      const axe = startAxe(['run', 'bot', '--agents-dir', home.agentsDir, '-p', 'go'], {
        env,
        wrap: disk.enter,
      });
      // The record exists and its first lines are written; then nothing is left of the disk.
      await waitFor(() => {
        const [id] = existsSync(runs) ? readdirSync(runs) : [];
        const agents = id === undefined ? '' : path.join(runs, id, 'agents');
        return (
          existsSync(agents) &&
          readdirSync(agents).some((f) => readFileSync(path.join(agents, f), 'utf8').includes('"turn.start"'))
        );
      }, 30_000);
      fill(path.join(disk.root, 'filler'));
      release();
      const ended = await axe.done;
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stdout).toBe('answer');
      const warnings = ended.stderr
        .split('\n')
        .filter((l) => l.startsWith('Warning: the run record could not be completed ('));
      expect(warnings, ended.stderr).toHaveLength(1);
      expect(warnings[0]).toMatch(/no space left/i);
      const [id] = readdirSync(runs) as [string];
      // run.json still says `running`: what the run ended as comes from the rest of its record.
      expect(JSON.parse(readFileSync(path.join(runs, id, 'run.json'), 'utf8')).status).toBe('running');
      const listed = await runAxe(['runs', 'list', '--json'], { env, wrap: disk.enter });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stderr).toBe('');
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id, status: 'completed' }]);
      const sent = fake.requests.length;
      const resumed = await runAxe(['run', '--resume', id], { env, wrap: disk.enter });
      expect(resumed.code).toBe(2);
      expect(resumed.stderr).toMatch(new RegExp(`^axe: --resume: run ${id} completed; nothing to resume`));
      expect(fake.requests).toHaveLength(sent);
    } finally {
      disk.unmount();
    }
  });

  it('the disk is full from the start: the run is not recorded and leaves no directory; runs list is quiet', async (context) => {
    const disk = smallDisk('1m');
    if (typeof disk === 'string') return skipBecause(context, disk);
    try {
      const { home, fake } = await setup();
      home.agent('bot', agentToml('bot'));
      fake.respond(() => ({ text: 'answer' }));
      const env = home.env(fake.url, { XDG_DATA_HOME: disk.inside });
      // The runs directory exists (an earlier run made it); nothing else fits.
      const runs = path.join(disk.root, 'axe', 'runs');
      await runAxe(['run', 'bot', '--agents-dir', home.agentsDir, '-p', 'first'], { env, wrap: disk.enter });
      const before = readdirSync(runs);
      fill(path.join(disk.root, 'filler'));
      for (const prompt of ['second', 'third']) {
        const ran = await runAxe(['run', 'bot', '--agents-dir', home.agentsDir, '-p', prompt], {
          env,
          wrap: disk.enter,
        });
        expect(ran.code, ran.stderr).toBe(0);
        expect(ran.stdout).toBe('answer');
        expect(ran.stderr).toMatch(
          /^Warning: run record: cannot write under .*: this run is not recorded\n$/,
        );
      }
      expect(readdirSync(runs)).toEqual(before);
      const listed = await runAxe(['runs', 'list'], { env, wrap: disk.enter });
      expect(listed.code).toBe(0);
      expect(listed.stderr).toBe('');
    } finally {
      disk.unmount();
    }
  });
});
