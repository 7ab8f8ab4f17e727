import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { makeSandbox } from './helpers.js';

/**
 * The target of the escape attempts: a workdir holding a symlinked directory, a symlinked leaf and
 * a dangling link that all point outside, next to an `outside/` dir holding a secret.
 */
export const SECRET = 'TOP SECRET';
/** What /etc/passwd always starts with: proof that it was read. */
export const PASSWD = 'root:x:0:';

export interface AttackBox {
  workdir: string;
  outside: string;
  secretPath: string;
  cleanup(): void;
}

export function makeAttackBox(): AttackBox {
  const { workdir, outside, cleanup } = makeSandbox();
  const secretPath = join(outside, 'secret.txt');
  writeFileSync(secretPath, SECRET);
  mkdirSync(join(workdir, 'sub'));
  writeFileSync(join(workdir, 'sub', 'inner.txt'), 'inner');
  symlinkSync(outside, join(workdir, 'link')); // symlinked directory
  symlinkSync(secretPath, join(workdir, 'leak.txt')); // symlinked leaf
  symlinkSync(join(outside, 'ghost.txt'), join(workdir, 'dangling.txt')); // leaf to a missing file
  return { workdir, outside, secretPath, cleanup };
}

/** Whether anything outside the workdir was changed: the secret, or a file created next to it. */
export function outsideChanged(box: AttackBox): boolean {
  return (
    readFileSync(box.secretPath, 'utf8') !== SECRET ||
    existsSync(join(box.outside, 'new.txt')) ||
    existsSync(join(box.outside, 'ghost.txt'))
  );
}

/** Text that proves something outside was read. */
export function revealsOutside(text: string): boolean {
  return text.includes(SECRET) || text.includes(PASSWD);
}

/**
 * Runs `attempt` unguarded in a fresh box and checks that it really escapes, so that an attempt
 * refused for an unrelated reason (a typo, a missing file) cannot pass as a blocked escape.
 */
export function expectEscapesUnguarded(attempt: (box: AttackBox) => boolean): void {
  const scratch = makeAttackBox();
  try {
    expect(attempt(scratch), 'the attempt must escape when nothing guards it').toBe(true);
  } finally {
    scratch.cleanup();
  }
}

export function expectRefused(out: { content: string; isError: boolean }, mention: string | RegExp): void {
  expect(out.isError).toBe(true);
  expect(revealsOutside(out.content)).toBe(false);
  expect(out.content).toMatch(mention);
}

/**
 * A fresh box for every test of the file; after each test, nothing outside may have changed.
 * Returns the current test's box.
 */
export function useAttackBox(): () => AttackBox {
  let box: AttackBox | undefined;
  beforeEach(() => {
    box = makeAttackBox();
  });
  afterEach(() => {
    const current = box!;
    box = undefined;
    try {
      expect(outsideChanged(current)).toBe(false);
    } finally {
      current.cleanup();
    }
  });
  return () => box!;
}
