import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { AXE_BIN, e2eHomes, runAxe, startAxe, waitFor } from './cli.js';
import { screen } from './terminal.js';

/** `--progress`: the live agent tree on stderr, drawn on a terminal only (or when asked). */
const setup = e2eHomes();

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`;

/** Runs a shell command under `script`, on a pseudo-terminal; returns what the terminal got. */
function onTerminal(command: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
    });
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

/** A lead calling three workers at once; they answer after 300, 600 and 450 ms. */
async function fanOut() {
  const { home, fake } = await setup();
  home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
  home.agent('worker', agentToml('worker'));
  const lead = delegatingParent(
    [callAgent('worker', 'part 1'), callAgent('worker', 'part 2'), callAgent('worker', 'part 3')],
    'merged',
  );
  const delays = [0, 300, 600, 450];
  fake.respond(
    (request: RecordedRequest): ScriptedReply =>
      roleOf(request) === 'worker'
        ? {
            text: `done ${request.lastUserText}`,
            delayMs: delays[Number(/part (\d)/.exec(request.lastUserText)?.[1])] ?? 0,
          }
        : lead(request),
  );
  const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'];
  const command = (extra: string[], redirect: string) =>
    `${[process.execPath, AXE_BIN, ...args, ...extra].map(quote).join(' ')} ${redirect}`;
  return { home, env: home.env(fake.url, { TERM: 'xterm' }), args, command };
}

const ESC = '\x1b';
const COLOUR = new RegExp(`${ESC}\\[\\d+m`);

describe.concurrent('live agent tree', () => {
  it('draws the tree on a terminal stderr, then clears it; stdout is the same as without a terminal', async () => {
    const { home, env, args, command } = await fanOut();
    const out = (name: string) => path.join(home.root, name);
    const drawn = await onTerminal(command([], `>${out('tty.out')}`), env);
    // Frames: each worker spinning, then done, indented under the lead.
    expect(drawn).toMatch(/lead\S*\s+\S*turn 1 · call_agent ×3/);
    const spinning = drawn.search(/ {2}\S*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\S* \S*worker #1/);
    const done = drawn.search(/ {2}\S*✓\S* \S*worker #1/);
    expect(spinning).toBeGreaterThan(0);
    expect(done).toBeGreaterThan(spinning);
    expect(drawn).toMatch(/ {2}\S*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]\S* \S*worker #2/);
    expect(drawn).toMatch(COLOUR);
    // Hidden cursor while drawing; at the end the tree is erased and the cursor shown again.
    expect(drawn.startsWith(`${ESC}[?25l`)).toBe(true);
    expect(drawn.endsWith(`\r${ESC}[J${ESC}[?25h`)).toBe(true);
    expect(screen(drawn)).toEqual([]);
    // stdout on the terminal too: the answer is all that is left on the screen.
    expect(screen(await onTerminal(command([], ''), env))).toEqual(['merged']);
    expect(screen(await onTerminal(command(['--stream'], ''), env))).toEqual(['merged']);

    // stderr to a file: nothing drawn, and stdout has the same bytes.
    await onTerminal(command([], `>${out('file.out')} 2>${out('file.err')}`), env);
    expect(readFileSync(out('file.err'), 'utf8')).toBe('');
    const piped = await runAxe(args, { env });
    expect(piped.stderr).toBe('');
    expect(readFileSync(out('tty.out'), 'utf8')).toBe(piped.stdout);
    expect(readFileSync(out('file.out'), 'utf8')).toBe(piped.stdout);
    expect(piped.stdout).toBe('merged');
  });

  it('NO_COLOR draws without colour; TERM=dumb, --verbose and --progress=never draw nothing', async () => {
    const { home, env, command } = await fanOut();
    const out = path.join(home.root, 'out');
    const plain = await onTerminal(command([], `>${out}`), { ...env, NO_COLOR: '1' });
    expect(plain).toMatch(/✓ worker #1/);
    expect(plain).not.toMatch(COLOUR);
    expect(await onTerminal(command([], `>${out}`), { ...env, TERM: 'dumb' })).toBe('');
    expect(await onTerminal(command(['--progress=never'], `>${out}`), env)).toBe('');
    expect(await onTerminal(command(['--verbose'], `>${out}`), env)).not.toContain(ESC);
  });

  it('--progress=always draws on a piped stderr, --progress never does not', async () => {
    const { env, args } = await fanOut();
    const always = await runAxe([...args, '--progress=always'], { env });
    expect(always.code).toBe(0);
    expect(always.stderr).toMatch(/✓\S* \S*worker #3/);
    expect(always.stdout).toBe('merged');
    const never = await runAxe([...args, '--progress', 'never'], { env });
    expect(never.stderr).toBe('');
    expect(never.stdout).toBe('merged');
  });

  it('a bad --progress value is a usage error: one line, exit 2', async () => {
    const { env, args } = await fanOut();
    const bad = await runAxe([...args, '--progress=sometimes'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('axe: --progress: expected never, auto or always, got "sometimes"\n');
  });

  it('prints stderr lines above the tree: the screen ends as without the tree', async () => {
    const { env, args } = await fanOut();
    const withTree = await runAxe([...args, '--verbose', '--progress=always'], { env });
    const without = await runAxe([...args, '--verbose', '--progress=never'], { env });
    const times = (line: string) => line.replace(/\d+ms/g, 'Nms');
    expect(withTree.stderr).toContain(`${ESC}[J`);
    expect(screen(withTree.stderr).map(times)).toEqual(screen(without.stderr).map(times));
    expect(screen(withTree.stderr).join('\n')).toMatch(/\n\[sub-agent\] "worker" completed in \d+ms/);
  });
});

describe('live agent tree: Ctrl-C', () => {
  it('takes the tree off before the interrupt line, and draws no more', async () => {
    const { env, args } = await fanOut();
    const axe = startAxe([...args, '--progress=always'], { env });
    await waitFor(() => axe.stderrSoFar().includes('worker #3'));
    axe.kill('SIGINT');
    const { code, stderr } = await axe.done;
    expect(code).toBe(130);
    const line = stderr.indexOf('axe: interrupted by SIGINT');
    expect(stderr.slice(0, line).endsWith(`\r${ESC}[J${ESC}[?25h`)).toBe(true);
    expect(stderr.slice(line)).not.toContain(ESC);
    expect(screen(stderr)).toEqual([expect.stringMatching(/^axe: interrupted by SIGINT; stopping lead, /)]);
  });
});
