import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLI, tempHome } from './run-axe.js';

/**
 * Runs the built CLI with a preload that notes, in a log, whether the process ended through
 * `process.reallyExit` (what `process.exit` ends with; a natural exit never calls it) and with
 * which code, plus whatever else `extra` (CommonJS, with `log(line)`) sets up.
 */
function endOf(args: string[], extra = ''): { code: number | null; stdout: string; log: string[] } {
  const { home, cwd, env } = tempHome();
  const log = join(home, 'exit.log');
  writeFileSync(log, '');
  const preload = join(home, 'preload.cjs');
  writeFileSync(
    preload,
    [
      `const log = (line) => require('node:fs').appendFileSync(${JSON.stringify(log)}, line + '\\n');`,
      'const reallyExit = process.reallyExit;',
      "process.reallyExit = (code) => { log('reallyExit ' + code); reallyExit.call(process, code); };",
      "process.on('exit', (code) => log('exit ' + code));",
      extra,
    ].join('\n'),
  );
  const result = spawnSync(process.execPath, ['--require', preload, CLI, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 15_000,
  });
  return {
    code: result.status,
    stdout: result.stdout,
    log: readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}

describe('axe exits as soon as it is idle', () => {
  it('ends through process.exit once nothing is left to do, after every exit listener, with its code', () => {
    const ok = endOf(['version']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^axe /);
    expect(ok.log).toEqual(['exit 0', 'reallyExit 0']);

    const failed = endOf(['run', 'no-such-agent', '-p', 'hi']);
    expect(failed.code).toBe(2);
    expect(failed.log).toEqual(['exit 2', 'reallyExit 2']);
  });

  it("leaves Node's usual exit alone when someone else listens for beforeExit (and may start more work)", () => {
    const extra = [
      'let once = false;',
      "process.on('beforeExit', () => { if (once) return; once = true; setTimeout(() => log('more work done'), 20); });",
    ].join('\n');
    const result = endOf(['version'], extra);
    expect(result.code).toBe(0);
    expect(result.log).toEqual(['more work done', 'exit 0']);
  });
});
