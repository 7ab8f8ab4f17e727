import { appendFileSync, cpSync, mkdirSync, readdirSync, readFileSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { findRun, loadRun, pruneRuns, runIds } from '../../internal/record/store.js';
import { LEAD, recordReviewRun, recordUnfinishedRun, SECURITY } from './trace-fixture.js';

describe('the runs store', () => {
  it('reads a transcript cut by a crash: the cut line is left out, the rest is read', async () => {
    const { runsDir, id } = await recordUnfinishedRun();
    const dir = join(runsDir, id, 'agents');
    const [file] = readdirSync(dir);
    const whole = readFileSync(join(dir, file as string), 'utf8')
      .split('\n')
      .filter(Boolean).length;
    appendFileSync(join(dir, file as string), '{"path":"lead","type":"tool.e');
    const run = await loadRun(runsDir, id);
    expect(run.transcripts.get(`agents/${file}`)).toHaveLength(whole);
    expect(run.tree).toMatchObject({ path: LEAD, status: 'running', lastTurn: 1, inTools: ['read_file'] });
    // The process that wrote it is this one, still alive: not "interrupted".
    expect(run.interrupted).toBe(false);
  });

  it('a transcript line that is JSON but no event is an error naming the file and line, not a crash', async () => {
    for (const [bad, what] of [
      ['{}', /:\d+: not an event of a run record$/],
      ['{"path":5,"type":"x","agent":"a","depth":0,"time":1}', /:\d+: not an event of a run record$/],
      [
        `{"path":"${LEAD}","type":"turn.end","agent":"lead","depth":0,"time":1,"usage":null}`,
        /0000-[\w-]+\.jsonl: not a transcript of a run record \(.+\)$/,
      ],
    ] as const) {
      const { runsDir, id } = await recordReviewRun();
      const dir = join(runsDir, id, 'agents');
      const [file] = readdirSync(dir).sort();
      appendFileSync(join(dir, file as string), `${bad}\n{"cut`);
      const failed = await loadRun(runsDir, id).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(ConfigError);
      expect((failed as Error).message).toMatch(what);
    }
  });

  it('the tree from the transcripts is the tree run.json was given at the end', async () => {
    const { runsDir, id } = await recordReviewRun();
    const run = await loadRun(runsDir, id);
    const strip = (node: unknown): unknown => JSON.parse(JSON.stringify(node));
    expect(strip(run.tree)).toEqual(strip(run.record.tree));
    expect(run.agents.find((a) => a.path === SECURITY)?.callId).toBeDefined();
  });

  it('pruning leaves a run that is still going (its process alive), whatever its age', async () => {
    const unfinished = await recordUnfinishedRun();
    const finished = await recordReviewRun();
    // Both in one runs dir: the unfinished one (this process, alive) is older.
    const dir = unfinished.runsDir;
    cpSync(join(finished.runsDir, finished.id), join(dir, finished.id), { recursive: true });
    expect(await pruneRuns(dir, 0)).toBe(1);
    expect(await runIds(dir)).toEqual([unfinished.id]);
  });

  it('pruning leaves a run whose run.json is not written yet, unless that is over a minute old', async () => {
    const { runsDir } = await recordReviewRun();
    const [finished] = await runIds(runsDir);
    // Ids sort by start time: these two are older than the finished run.
    const making = '20000101-000000.000-aaaaaa';
    const abandoned = '20000101-000000.000-bbbbbb';
    for (const id of [making, abandoned]) mkdirSync(join(runsDir, id, 'agents'), { recursive: true });
    const longAgo = new Date(Date.now() - 120_000);
    utimesSync(join(runsDir, abandoned), longAgo, longAgo);
    expect(await pruneRuns(runsDir, 1)).toBe(1);
    expect(await runIds(runsDir)).toEqual([finished, making]);
  });

  it('finds runs by id, unique prefix or last; prunes to the newest N', async () => {
    const first = await recordReviewRun();
    const ids = await runIds(first.runsDir);
    expect(await findRun(first.runsDir, 'last')).toBe(ids[0]);
    expect(await findRun(first.runsDir, (ids[0] as string).slice(0, 20))).toBe(ids[0]);
    await expect(findRun(first.runsDir, 'zz')).rejects.toThrow('no recorded run matches "zz"');
    expect(await pruneRuns(first.runsDir, 0)).toBe(ids.length);
    expect(await runIds(first.runsDir)).toEqual([]);
    await expect(findRun(first.runsDir, 'last')).rejects.toThrow('no recorded runs in');
  });
});
