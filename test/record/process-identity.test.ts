import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { ownIdentity, type ProcessIdentity, processLiveness } from '../../internal/process-alive.js';
import { fileDigest } from '../../internal/record/digest.js';
import type { RunRecord } from '../../internal/record/record.js';
import { RunRecorder } from '../../internal/record/recorder.js';
import { continuePlan, resumePlan } from '../../internal/record/run-record.js';
import {
  isLive,
  loadRun,
  pruneRuns,
  readRunRecord,
  runIds,
  runLiveness,
  shownStatus,
} from '../../internal/record/store.js';
import { tempDirForFile } from '../temp-dir.js';
import { request } from './trace-fixture.js';

/**
 * A run's record names its process beyond its pid (start time, boot, host name), so a run killed
 * while another process has (or later gets) its pid — axe is pid 1 in every container; a reboot —
 * is not taken for one still running. Records without it keep the pid check.
 */

const hasProc = existsSync('/proc/self/stat');

/** Field 22 (start time, clock ticks since boot) of `/proc/<pid>/stat`, read independently. */
function startTicksOf(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[19]);
}

const bootId = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A pid no process has: a child that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number;
}

describe.runIf(hasProc)('the identity of a process (Linux, /proc)', () => {
  it("this process's: its start time (field 22 of /proc/self/stat), the boot id and the host name", () => {
    expect(ownIdentity()).toEqual({
      startTicks: startTicksOf(process.pid),
      bootId: bootId(),
      hostname: hostname(),
    });
  });

  it('a live pid whose start time or boot id differ from the recorded ones is another process: gone', () => {
    // The parent (vitest) is alive: its pid is in use, as pid 1 is in every container.
    const pid = process.ppid;
    const same: ProcessIdentity = { startTicks: startTicksOf(pid), bootId: bootId(), hostname: hostname() };
    expect(processLiveness(pid, same)).toBe('alive');
    expect(processLiveness(pid, { ...same, startTicks: (same.startTicks as number) + 1 })).toBe('gone');
    expect(processLiveness(pid, { ...same, bootId: '00000000-0000-0000-0000-000000000000' })).toBe('gone');
    // Only what was recorded is compared.
    expect(processLiveness(pid, { startTicks: same.startTicks })).toBe('alive');
    expect(processLiveness(pid, { startTicks: (same.startTicks as number) - 1 })).toBe('gone');
    // The same process seen under another host name (a container sharing the pid namespace): alive.
    expect(processLiveness(pid, { ...same, hostname: 'another-container' })).toBe('alive');
  });

  it('a record without identity (older axe, or no /proc where it ran): the pid decides, as before', () => {
    expect(processLiveness(process.ppid, undefined)).toBe('unverified');
    expect(processLiveness(deadPid(), undefined)).toBe('gone');
    // Host name alone (nothing else to compare): another machine's process, else unverified.
    expect(processLiveness(process.ppid, { hostname: 'elsewhere' })).toBe('gone');
    expect(processLiveness(process.ppid, { hostname: hostname() })).toBe('unverified');
  });

  it('a pid nobody has is gone whatever the identity', () => {
    expect(processLiveness(deadPid(), ownIdentity())).toBe('gone');
  });
});

/** A `running` run.json of `pid`, with `identity` when given, for an agent file that exists. */
function unfinishedRecord(root: string, id: string, pid: number, identity?: ProcessIdentity): void {
  const agentFile = join(root, 'lead.toml');
  writeFileSync(agentFile, 'name = "lead"\nmodel = "anthropic/claude-x"\n');
  const dir = join(root, 'axe', 'runs', id);
  mkdirSync(join(dir, 'agents'), { recursive: true });
  const record: RunRecord = {
    version: 1,
    id,
    pid,
    ...(identity ? { process: identity } : {}),
    request: { ...request, agentFile, agentDigest: fileDigest(agentFile), cwd: root },
    startedAt: '2026-01-01T00:00:00.000Z',
    status: 'running',
  };
  writeFileSync(join(dir, 'run.json'), JSON.stringify(record));
}

const ID = '20260101-000000.000-aaaaaa';

describe.runIf(hasProc)('a run whose pid another process now has (a container’s pid 1, a reboot)', () => {
  const cases = () => {
    const pid = process.ppid;
    const same: ProcessIdentity = { startTicks: startTicksOf(pid), bootId: bootId(), hostname: hostname() };
    return {
      pid,
      same,
      otherStart: { ...same, startTicks: (same.startTicks as number) + 7 },
      otherBoot: { ...same, bootId: 'ffffffff-ffff-ffff-ffff-ffffffffffff' },
    };
  };

  for (const which of ['otherStart', 'otherBoot'] as const) {
    it(`(${which}) is interrupted: runs list says so, --resume picks it up, pruning removes it`, async () => {
      const root = tempDirForFile('axe-identity-');
      const { pid, [which]: identity } = cases();
      unfinishedRecord(root, ID, pid, identity);
      const runs = join(root, 'axe', 'runs');
      const record = await readRunRecord(runs, ID);
      expect(record.process).toEqual(identity);
      expect(runLiveness(record)).toBe('gone');
      expect(shownStatus(record)).toBe('interrupted');
      expect((await loadRun(runs, ID)).interrupted).toBe(true);
      const env = { XDG_DATA_HOME: root };
      const plan = await resumePlan('last', undefined, false, env);
      expect(plan.id).toBe(ID);
      expect(await pruneRuns(runs, 0)).toBe(1);
      expect(await runIds(runs)).toEqual([]);
    });
  }

  it('with its own identity (that very process runs it): running; --resume refused, also with --force; kept', async () => {
    const root = tempDirForFile('axe-identity-');
    const { pid, same } = cases();
    unfinishedRecord(root, ID, pid, same);
    const runs = join(root, 'axe', 'runs');
    const record = await readRunRecord(runs, ID);
    expect(runLiveness(record)).toBe('alive');
    expect(shownStatus(record)).toBe('running');
    const env = { XDG_DATA_HOME: root };
    for (const force of [false, true]) {
      const refused = await resumePlan('last', undefined, force, env).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toBe(`--resume: run ${ID} is still running (pid ${pid})`);
    }
    expect(await pruneRuns(runs, 0)).toBe(0);
    expect(await runIds(runs)).toEqual([ID]);
  });

  it('an older record (no identity) whose pid is alive: running as before; --force resumes it', async () => {
    const root = tempDirForFile('axe-identity-');
    unfinishedRecord(root, ID, process.ppid);
    const runs = join(root, 'axe', 'runs');
    const record = await readRunRecord(runs, ID);
    expect(record.process).toBeUndefined();
    expect(isLive(record)).toBe(true);
    expect(shownStatus(record)).toBe('running');
    const env = { XDG_DATA_HOME: root };
    await expect(resumePlan('last', undefined, false, env)).rejects.toThrow(
      `--resume: run ${ID} may still be running: its pid ${process.ppid} is in use, and nothing tells whether by that run (--force resumes it anyway)`,
    );
    expect((await resumePlan('last', undefined, true, env)).id).toBe(ID);
    expect(await pruneRuns(runs, 0)).toBe(0);
  });

  it('an older record (no identity) whose pid is dead: interrupted, as before', async () => {
    const root = tempDirForFile('axe-identity-');
    unfinishedRecord(root, ID, deadPid());
    const record = await readRunRecord(join(root, 'axe', 'runs'), ID);
    expect(shownStatus(record)).toBe('interrupted');
    expect((await resumePlan('last', undefined, false, { XDG_DATA_HOME: root })).id).toBe(ID);
  });
});

describe('run.json and the identity', () => {
  it.runIf(hasProc)('a new record holds its process’s identity; the run is alive while it runs', async () => {
    const runs = join(tempDirForFile('axe-identity-'), 'runs');
    const recorder = await RunRecorder.open(runs, request, {}, (message) => {
      throw new Error(message);
    });
    const json = JSON.parse(readFileSync(join(runs, recorder?.id as string, 'run.json'), 'utf8'));
    expect(json.pid).toBe(process.pid);
    expect(json.process).toEqual(ownIdentity());
    expect(json.process.startTicks).toBe(startTicksOf(process.pid));
    expect(runLiveness(await readRunRecord(runs, recorder?.id as string))).toBe('alive');
  });

  it('an identity of the wrong type is an error naming the field', async () => {
    for (const [identity, field] of [
      [{ startTicks: 'x' }, '"process.startTicks" must be a whole number'],
      [{ bootId: 5 }, '"process.bootId" must be a string'],
      [{ hostname: null }, '"process.hostname" must be a string'],
      ['pid 1', '"process" must be an object'],
    ] as const) {
      const root = tempDirForFile('axe-identity-');
      unfinishedRecord(root, ID, 1, identity as unknown as ProcessIdentity);
      await expect(readRunRecord(join(root, 'axe', 'runs'), ID)).rejects.toThrow(field);
    }
  });
});

describe('--continue and --resume name the agent as a path from anywhere', () => {
  /** A finished run of `./bot.md`, asked in `<root>/proj`. */
  function botRun(root: string, status: RunRecord['status'] = 'completed'): string {
    const proj = join(root, 'proj');
    mkdirSync(proj, { recursive: true });
    const agentFile = join(proj, 'bot.md');
    writeFileSync(agentFile, '---\nname: bot\nmodel: anthropic/claude-x\n---\nhi\n');
    writeFileSync(join(proj, 'other.md'), '---\nname: other\nmodel: anthropic/claude-x\n---\nhi\n');
    const dir = join(root, 'axe', 'runs', ID);
    mkdirSync(join(dir, 'agents'), { recursive: true });
    const record: RunRecord = {
      version: 1,
      id: ID,
      pid: deadPid(),
      request: { ...request, agent: './bot.md', agentFile, agentDigest: fileDigest(agentFile), cwd: proj },
      startedAt: '2026-01-01T00:00:00.000Z',
      status,
    };
    writeFileSync(join(dir, 'run.json'), JSON.stringify(record));
    return proj;
  }

  /** `fn` with the shell in `dir`. */
  async function inDir<T>(dir: string, fn: () => Promise<T>): Promise<T> {
    const before = process.cwd();
    process.chdir(dir);
    try {
      return await fn();
    } finally {
      process.chdir(before);
    }
  }

  it('--continue of a run of ./bot.md as proj/bot.md, by its absolute path, or as typed: the same agent', async () => {
    const root = tempDirForFile('axe-agent-path-');
    const proj = botRun(root);
    const env = { XDG_DATA_HOME: root };
    expect((await inDir(root, () => continuePlan('last', 'proj/bot.md', env))).id).toBe(ID);
    expect((await inDir(root, () => continuePlan('last', './proj/../proj/bot.md', env))).id).toBe(ID);
    expect((await continuePlan('last', join(proj, 'bot.md'), env)).id).toBe(ID);
    expect((await inDir(proj, () => continuePlan('last', './bot.md', env))).id).toBe(ID);
  });

  it('--continue with another agent is still refused: another file, or a name', async () => {
    const root = tempDirForFile('axe-agent-path-');
    const proj = botRun(root);
    const env = { XDG_DATA_HOME: root };
    const message = `--continue: run ${ID} is a run of "./bot.md" (${join(proj, 'bot.md')}), not "proj/other.md" (axe run ${join(proj, 'bot.md')} --continue ${ID})`;
    await expect(inDir(root, () => continuePlan('last', 'proj/other.md', env))).rejects.toThrow(message);
    await expect(inDir(proj, () => continuePlan('last', 'bot', env))).rejects.toThrow(ConfigError);
    // A path to a file that is not there is not the agent either.
    await expect(inDir(root, () => continuePlan('last', 'bot.md/../x/bot.md', env))).rejects.toThrow(
      ConfigError,
    );
  });

  it('--resume of a run of ./bot.md named proj/bot.md: the same agent; proj/other.md refused', async () => {
    const root = tempDirForFile('axe-agent-path-');
    botRun(root, 'cancelled');
    const env = { XDG_DATA_HOME: root };
    expect((await inDir(root, () => resumePlan('last', 'proj/bot.md', false, env))).id).toBe(ID);
    await expect(inDir(root, () => resumePlan('last', 'proj/other.md', false, env))).rejects.toThrow(
      `--resume: run ${ID} is a run of "./bot.md"`,
    );
  });
});
