import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { AXE_BIN, e2eHomes, runAxe } from './cli.js';

/** On a terminal the answer ends with a newline; in a pipe or file it is Go axe's exact bytes. */
const setup = e2eHomes();

/** Runs axe under `script`, so its stdout is a pseudo-terminal; returns what the terminal got. */
function onTerminal(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  const quoted = [process.execPath, AXE_BIN, ...args]
    .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
    .join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qec', quoted, '/dev/null'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

describe.concurrent('stdout on a terminal', () => {
  it('ends the answer with a newline on a terminal only', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'the answer' }));
    const env = home.env(fake.url);
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];
    expect(await onTerminal(args, env)).toBe('the answer\r\n');
    expect(await onTerminal([...args, '--stream'], env)).toBe('the answer\r\n');
    expect((await runAxe(args, { env })).stdout).toBe('the answer');
    fake.respond(() => ({ text: 'already ends\n' }));
    expect(await onTerminal(args, env)).toBe('already ends\r\n');
  });
});
