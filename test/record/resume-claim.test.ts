import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { ownIdentity } from '../../internal/process-alive.js';
import { claimResume, resumedBy } from '../../internal/record/resume-claim.js';
import { childScript } from '../child-script.js';
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
    const held = await claimResume(dir, ID);
    // The stale claim stays; the new one is made after it, and is the one that counts.
    const next = join(dir, ID, 'resumed-by.1.json');
    const identity = ownIdentity();
    expect(JSON.parse(readFileSync(next, 'utf8'))).toEqual({
      pid: process.pid,
      ...(identity ? { process: identity } : {}),
    });
    expect(JSON.parse(readFileSync(claim, 'utf8'))).toEqual({ pid });
    await held.name(NEWER);
    expect(await resumedBy(dir, ID)).toBe(NEWER);
    const again = await claimResume(dir, ID).catch((error: unknown) => error);
    expect((again as Error).message).toBe(
      `run ${ID} is being resumed by process ${process.pid} (run ${NEWER})`,
    );
  });

  it('many --resume at once over a stale claim: exactly one of them holds the run, every time', async () => {
    const claimant = await bundledClaimant();
    const pid = deadPid();
    // Each process claims, in each round, a run whose claim is stale; a winner stays alive (it holds
    // its run until the end), so a loser must be refused by it.
    const children = Array.from({ length: 6 }, () => spawnClaimant(claimant));
    try {
      for (let round = 0; round < 40; round++) {
        const { dir, claim } = runDir();
        writeFileSync(claim, JSON.stringify({ pid }));
        const results = await Promise.all(children.map((child) => child.claim(dir)));
        expect(
          results.filter((result) => result === 'held'),
          `round ${round}: ${results}`,
        ).toHaveLength(1);
      }
    } finally {
      for (const child of children) child.end();
    }
  });
});

/** A script that claims, for each run directory read on stdin, run ID there: `held` or `refused`. */
async function bundledClaimant(): Promise<string> {
  return childScript(
    `
        import { createInterface } from 'node:readline';
        import { claimResume } from './internal/record/resume-claim.ts';
        for await (const dir of createInterface({ input: process.stdin })) {
          const result = await claimResume(dir, ${JSON.stringify(ID)}).then(() => 'held', () => 'refused');
          process.stdout.write(result + '\\n');
        }
      `,
    tempDirForFile('axe-claimant-'),
    'claimant.mjs',
  );
}

function spawnClaimant(script: string) {
  const child = spawn(process.execPath, [script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout as Readable });
  const waiting: ((line: string) => void)[] = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  return {
    claim(dir: string): Promise<string> {
      const result = new Promise<string>((resolve) => waiting.push(resolve));
      child.stdin?.write(`${dir}\n`);
      return result;
    },
    end(): void {
      child.stdin?.end();
    },
  };
}
