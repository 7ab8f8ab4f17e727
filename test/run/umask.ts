import { spawn } from 'node:child_process';
import { AXE_BIN, type AxeResult, REPO_ROOT } from './cli.js';

/** `axe args` under umask 000, which would leave every file and directory open to all. */
export function runUnderUmask000(args: string[], env: NodeJS.ProcessEnv): Promise<AxeResult> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, AXE_BIN, ...args], {
      env,
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: 0 }));
  });
}
