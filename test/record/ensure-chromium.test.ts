import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const SCRIPT = fileURLToPath(new URL('../../scripts/ensure-chromium.sh', import.meta.url));

describe('scripts/ensure-chromium.sh', () => {
  it('prints the Chromium that CHROMIUM names, and only that', async () => {
    const { stdout } = await run('bash', [SCRIPT], { env: { ...process.env, CHROMIUM: process.execPath } });
    expect(stdout).toBe(`${process.execPath}\n`);
  });

  it('fails with a one-line reason, nothing on stdout', async () => {
    const failure = await run('bash', [SCRIPT], {
      env: { ...process.env, CHROMIUM: '/nonexistent/chromium' },
    }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toBe(
      'ensure-chromium: CHROMIUM=/nonexistent/chromium is not an executable file\n',
    );
  });
});
