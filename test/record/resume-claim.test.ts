import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { ownIdentity } from '../../internal/process-alive.js';
import { claimResume, resumedBy } from '../../internal/record/resume-claim.js';
import { tempDirForFile } from '../temp-dir.js';

const ID = '20260101-000000.000-abcdef';
const NEWER = '20260101-000001.000-123456';

function runDir(): { dir: string; claim: string } {
  const dir = tempDirForFile('axe-claim-');
  mkdirSync(join(dir, ID));
  return { dir, claim: join(dir, ID, 'resumed-by.json') };
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number;
}

describe('claimResume', () => {
  it('claims a run once, durably naming the run that resumes it', async () => {
    const { dir, claim } = runDir();
    const held = await claimResume(dir, ID);
    expect(JSON.parse(readFileSync(claim, 'utf8'))).toMatchObject({ pid: process.pid });
    await held.name(NEWER);
    expect(await resumedBy(dir, ID)).toBe(NEWER);
    const again = await claimResume(dir, ID).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ConfigError);
    expect((again as Error).message).toBe(
      `run ${ID} is being resumed by process ${process.pid} (run ${NEWER})`,
    );
  });

  it('a claim whose process is gone: refused once it named its run, replaced when it did not', async () => {
    const { dir, claim } = runDir();
    const pid = deadPid();
    writeFileSync(claim, JSON.stringify({ pid, run: NEWER }));
    const refused = await claimResume(dir, ID).catch((error: unknown) => error);
    expect((refused as Error).message).toBe(
      `run ${ID} was resumed by run ${NEWER}; resume that run instead (axe run --resume ${NEWER})`,
    );
    writeFileSync(claim, JSON.stringify({ pid }));
    await claimResume(dir, ID);
    const identity = ownIdentity();
    expect(JSON.parse(readFileSync(claim, 'utf8'))).toEqual({
      pid: process.pid,
      ...(identity ? { process: identity } : {}),
    });
  });
});
