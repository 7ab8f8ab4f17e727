import { spawn } from 'node:child_process';
import { chmodSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRunning } from '../tools/helpers.js';
import { agentToml } from './agents.js';
import {
  AXE_BIN,
  type AxeResult,
  e2eHomes,
  REPO_ROOT,
  runAxe,
  startAxe,
  type TempHome,
  waitFor,
} from './cli.js';

/**
 * The CLI as a Unix tool: repeated and odd flags, stdout that goes away or fills up, stdin that
 * never ends or is too big, and signals that must end every process axe started.
 */
const setup = e2eHomes();

/** Runs the binary with stdin left open (or fed `input` without closing), stdout/stderr captured. */
function spawnAxe(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { input?: string; stdout?: 'pipe' | number } = {},
): { child: ReturnType<typeof spawn>; done: Promise<AxeResult> } {
  const started = Date.now();
  const child = spawn(process.execPath, [AXE_BIN, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', options.stdout ?? 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdin?.on('error', () => {});
  if (options.input !== undefined) child.stdin?.write(options.input);
  const done = new Promise<AxeResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started })),
  );
  return { child, done };
}

/** `sh -c` around the binary (`$AXE` in `script`): shell pipes and redirections as users write them. */
function inShell(script: string, args: string[], env: NodeJS.ProcessEnv): Promise<AxeResult> {
  return new Promise((resolve) => {
    const shell = spawn('sh', ['-c', script, 'sh', ...args], {
      env: { ...env, AXE: `"${process.execPath}" "${AXE_BIN}"` },
    });
    let stderr = '';
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    shell.on('close', (code, signal) => resolve({ code, signal, stdout: '', stderr, ms: 0 }));
  });
}

/** Runs the binary (stdin closed) with a preload that logs the Node modules it loaded by its exit. */
async function modulesLoaded(
  home: TempHome,
  fakeUrl: string | undefined,
  args: string[],
): Promise<{ result: AxeResult; loaded: string[] }> {
  const log = home.file('modules.json', '');
  const preload = home.file(
    'modules.cjs',
    `process.on('exit', () => require('node:fs').writeFileSync(process.env.MODULES_LOG, JSON.stringify(process.moduleLoadList)));\n`,
  );
  const { child, done } = spawnAxe(
    args,
    home.env(fakeUrl, { NODE_OPTIONS: `--require ${preload}`, MODULES_LOG: log }),
  );
  child.stdin?.end();
  const result = await done;
  return { result, loaded: JSON.parse(readFileSync(log, 'utf8')) as string[] };
}

describe.concurrent('flags', () => {
  it('repeated booleans stay on, repeated values: the last wins; unknown flags named as typed', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env(fake.url);
    const base = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];

    const dry = await runAxe([...base, '--dry-run', '--dry-run', '--timeout', '5', '--timeout', '7'], {
      env,
    });
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('=== Dry Run ===');
    expect(dry.stdout).toContain('Timeout:  7s');
    expect(fake.requests).toHaveLength(0);

    fake.enqueue({ text: 'one' }, { text: 'two' });
    const json = await runAxe([...base, '--json', '--json', '--max-tokens', '1', '--max-tokens', '100000'], {
      env,
    });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: 'one', budget_max_tokens: 100000 });
    const verbose = await runAxe([...base, '-v', '-v'], { env });
    expect(verbose.stderr).toMatch(/^Model: {4}anthropic\/claude-test\n/);

    // Go's forms: a switch with a value.
    const sent = fake.requests.length;
    expect(await runAxe([...base, '--dry-run=true'], { env })).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('=== Dry Run ==='),
    });
    expect(fake.requests).toHaveLength(sent);
    fake.enqueue({ text: 'plain' });
    expect(await runAxe([...base, '--json=false', '--stream=false'], { env })).toMatchObject({
      code: 0,
      stdout: 'plain',
    });

    // Go's values of a switch: 1 / 0 / TRUE as well as true / false.
    fake.enqueue({ text: 'numbered' });
    const numbered = await runAxe([...base, '--json=1', '--verbose=0', '--stream=FALSE'], { env });
    expect(numbered).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(numbered.stdout)).toMatchObject({ content: 'numbered' });
    const cases: [string[], string][] = [
      [[...base, '--json=maybe'], 'axe: --json: expected true or false, got "maybe"\n'],
      [[...base, '--bogus-flag'], 'axe: unknown option --bogus-flag (see axe run --help)\n'],
      [['--bogus'], 'axe: unknown option --bogus (see axe --help)\n'],
      [[...base, '--timeout', '-1'], 'axe: --timeout: expected a positive number of seconds, got "-1"\n'],
      // A flag the command does not know is refused by its name, whatever follows it, and so is
      // another command's (`--strict` is validate's switch).
      [[...base, '--bogus', '-1'], 'axe: unknown option --bogus (see axe run --help)\n'],
      [['agents', 'list', '--timeout', '-5'], 'axe: unknown option --timeout (see axe agents --help)\n'],
      [['agents', 'list', '--strict=maybe'], 'axe: unknown option --strict (see axe agents --help)\n'],
      // A negation of a flag nobody declared is named as typed, not as cac files it (`--suchOpt`).
      [['agents', 'list', '--no-such-opt'], 'axe: unknown option --no-such-opt (see axe agents --help)\n'],
      [[...base, '--no-bogus-flag'], 'axe: unknown option --no-bogus-flag (see axe run --help)\n'],
      [['help', 'nope'], 'axe: unknown command "nope" (see axe --help)\n'],
      [[...base, '--dry-run=yes'], 'axe: --dry-run: expected true or false, got "yes"\n'],
      // A key pasted in the wrong place (env's ANTHROPIC_API_KEY) is not printed back.
      [['help', 'test-key'], 'axe: unknown command "***" (see axe --help)\n'],
      // A word after the agent's name is its prompt: with -p too, an error (that quotes no key).
      [
        [...base, 'test-key'],
        'axe: -p and a prompt after the agent\'s name ("***") cannot be used together: give one\n',
      ],
    ];
    for (const [args, stderr] of cases) {
      expect(await runAxe(args, { env })).toMatchObject({ code: 2, stdout: '', stderr });
    }
    for (const flag of ['-V', '--version']) {
      expect(await runAxe([flag], { env })).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^axe version \d/),
      });
    }
    const help = await runAxe(['help', 'run'], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('$ axe run <agent>');
    expect(help.stdout).toContain('--stdin-append');
    // --help after a command and its words: that command's help, exit 0.
    for (const [args, usage] of [
      [['run', 'solo', '--help'], '$ axe run <agent>'],
      [['agents', 'list', '--help'], '$ axe agents <action> [agent]'],
      [['runs', 'show', 'last', '-h'], '$ axe runs <action> [run]'],
      // With the command's own flags before it too: the help, not an unknown option.
      [['run', 'solo', '--json', '--help'], '$ axe run <agent>'],
      [['agents', 'list', '--json', '-h'], '$ axe agents <action> [agent]'],
    ] as const) {
      const shown = await runAxe([...args], { env });
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(shown.stdout).toContain(usage);
    }
    expect(await runAxe(['bogus', '--help'], { env })).toMatchObject({
      code: 2,
      stderr: 'axe: unknown command "bogus" (see axe --help)\n',
    });
  });
});

describe.concurrent('stdout', () => {
  it('a reader that goes away: exit 141, quietly; a full disk or a closed stdout: one line, exit 1', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env(fake.url);
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];
    fake.respond(() => ({ text: 'y'.repeat(4 << 20) }));

    const { child, done } = spawnAxe(args, env);
    child.stdout?.once('data', () => child.stdout?.destroy());
    child.stdin?.end();
    expect(await done).toMatchObject({ code: 141, stderr: '' });

    const full = spawnAxe(args, env, { stdout: openSync('/dev/full', 'w') });
    full.child.stdin?.end();
    expect(await full.done).toMatchObject({
      code: 1,
      stderr: 'axe: cannot write to stdout: no space left on the device\n',
    });

    // `>&-` in a shell: the descriptor is closed, not redirected.
    const closed = await inShell('eval "$AXE" \'"$@"\' >&-', args, env);
    expect(closed).toMatchObject({
      code: 1,
      stderr: 'axe: stdout is closed: nothing could be printed (redirect it to /dev/null to discard it)\n',
    });
  });
});

describe.concurrent('stdout and stderr written directly', () => {
  it('a pipe another process made non-blocking and filled: the answer follows, in order, once read', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'the answer' }));
    // Through a FIFO whose one write side axe shares with a Node process that made it non-blocking
    // (creating its process.stdout does), filled it and stays alive; its reader comes a second
    // later: axe's write finds the pipe full (EAGAIN) instead of waiting.
    const fifo = path.join(home.root, 'out.fifo');
    const ready = path.join(home.root, 'holder-ready');
    const holder = `const fs = require("node:fs"); process.stdout; let n = 0;
try { for (;;) n += fs.writeSync(1, "h".repeat(4096)); } catch {}
fs.writeFileSync(process.argv[1], String(n)); setTimeout(() => {}, 10000);`;
    const script = `mkfifo "${fifo}"; exec 3<>"${fifo}"; exec 4>"${fifo}"
node -e '${holder}' "${ready}" >&4 & holder=$!
while [ ! -s "${ready}" ]; do sleep 0.02; done
(sleep 1; exec cat "${fifo}" 3<&- 4>&-) & reader=$!
eval "$AXE" '"$@"' >&4; code=$?
kill $holder; wait $holder 2>/dev/null; exec 3<&- 4>&-; wait $reader; exit $code`;
    const shell = spawn(
      'sh',
      ['-c', script, 'sh', 'run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'],
      {
        env: { ...home.env(fake.url), AXE: `"${process.execPath}" "${AXE_BIN}"` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const closed = new Promise((resolve) => shell.on('close', resolve));
    const chunks: Buffer[] = [];
    let stderr = '';
    shell.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    shell.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    expect({ code: await closed, stderr }).toEqual({ code: 0, stderr: '' });
    const filled = Number(readFileSync(ready, 'utf8'));
    expect(filled).toBeGreaterThan(0);
    expect(Buffer.concat(chunks).toString('utf8') === `${'h'.repeat(filled)}the answer`).toBe(true);
  });

  it('a long answer to a reader that stalls: axe still hears Ctrl-C, and the whole answer arrives once read', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const answer = Array.from({ length: 200_000 }, (_, i) => `${i}\n`).join('');
    fake.respond(() => ({ text: answer }));
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];
    // Read late: the whole answer, in order.
    const late = spawnAxe(args, home.env(fake.url));
    late.child.stdin?.end();
    late.child.stdout?.pause();
    await waitFor(() => fake.requests[0]?.finishedAt !== undefined, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    late.child.stdout?.resume();
    expect(await late.done).toMatchObject({ code: 0, stderr: '' });
    expect(late.done.then((r) => r.stdout === answer)).resolves.toBe(true);
    // Never read: Ctrl-C still ends it (a blocking write would hold it until the reader reads).
    const stalled = spawnAxe(args, home.env(fake.url));
    stalled.child.stdin?.end();
    stalled.child.stdout?.pause();
    await waitFor(() => fake.requests[1]?.finishedAt !== undefined, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    stalled.child.kill('SIGINT');
    const ended = await Promise.race([
      stalled.done.then((result) => result.code === 130 || result.signal === 'SIGINT'),
      new Promise((resolve) => setTimeout(() => resolve('still running'), 5000)),
    ]);
    expect(ended).toBe(true);
  });

  it('agents list and --dry-run into pipes load neither node:net, node:tty nor node:fs/promises', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    for (const args of [
      ['agents', 'list', '--agents-dir', home.agentsDir],
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--dry-run'],
    ]) {
      const { result, loaded } = await modulesLoaded(home, undefined, args);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('solo');
      expect(loaded.filter((name) => /^NativeModule (net|tty|fs\/promises)$/.test(name))).toEqual([]);
    }
  });

  it('a one-turn run loads no node:fs/promises: its agent, config.toml and the record listing are read in one go', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    // A key in it: the file's mode is checked too.
    const config = home.file(
      'config/axe/config.toml',
      '[runs]\nkeep = 5\n\n[providers.anthropic]\napi_key = "test-key"\n',
    );
    chmodSync(config, 0o600);
    fake.enqueue({ text: 'pong' });
    const { result, loaded } = await modulesLoaded(home, fake.url, [
      'run',
      'solo',
      '--agents-dir',
      home.agentsDir,
      '-p',
      'x',
    ]);
    expect(result.code).toBe(0);
    // The list is the one at exit, after the model call.
    expect(result.stdout).toBe('pong');
    expect(loaded).toContain('NativeModule net');
    expect(loaded.filter((name) => name === 'NativeModule fs/promises')).toEqual([]);
  });
});

describe.concurrent('stdin', () => {
  it('a pipe that never closes ends at --timeout (exit 3) or on Ctrl-C (exit 130)', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env(fake.url);
    const args = ['run', 'solo', '--agents-dir', home.agentsDir];
    // stdin stays open for as long as the test runs: that axe ends at all is --timeout's doing.
    const timed = spawnAxe([...args, '--timeout', '1'], env, { input: 'partial' });
    const result = await timed.done;
    expect(result).toMatchObject({
      code: 3,
      stderr: 'axe: timeout after 1s: stdin was still open (close it, or give the message with -p)\n',
    });

    // Four times a pipe's buffer: the write completes only once axe is reading stdin, by which
    // time its signal handlers are in place.
    const interrupted = spawnAxe(args, env);
    await new Promise((resolve) => interrupted.child.stdin?.write('x'.repeat(1 << 18), resolve));
    interrupted.child.kill('SIGINT');
    const stopped = await interrupted.done;
    expect(stopped.code).toBe(130);
    expect(stopped.stderr).toBe('axe: interrupted by SIGINT; stopping solo\n');
    expect(fake.requests).toHaveLength(0);
  });

  it('more than 16 MiB piped in is exit 2 at once, with bounded memory', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const { child, done } = spawnAxe(['run', 'solo', '--agents-dir', home.agentsDir], home.env(fake.url));
    const chunk = Buffer.alloc(1 << 20, 'y\n');
    const pump = (): void => {
      while (child.stdin?.writable && child.stdin.write(chunk)) {}
      child.stdin?.once('drain', pump);
    };
    pump();
    expect(await done).toMatchObject({
      code: 2,
      stderr: "axe: stdin: more than 16 MiB piped in (axe's limit)\n",
    });
    expect(fake.requests).toHaveLength(0);
  });

  it('empty stdin and -p with stdin are said on stderr; --stdin-append sends both', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env(fake.url);
    const base = ['run', 'solo', '--agents-dir', home.agentsDir];
    fake.respond(() => ({ text: 'ok' }));

    expect(await runAxe(base, { env, stdin: ' \n' })).toMatchObject({
      code: 0,
      stderr: 'Warning: piped stdin is empty: sending the default message\n',
    });
    expect(fake.requests.at(-1)?.lastUserText).toBe('Execute the task described in your instructions.');

    // A shell pipe (a FIFO), as `git diff | axe run … -p …` gives it.
    const ignored = await inShell(
      'printf "the diff" | eval "$AXE" \'"$@"\'',
      [...base, '-p', 'only this'],
      env,
    );
    expect(ignored).toMatchObject({
      code: 0,
      stderr: 'Warning: piped stdin ignored because -p was given (--stdin-append sends both)\n',
    });
    expect(fake.requests.at(-1)?.lastUserText).toBe('only this');

    expect(
      await runAxe([...base, '-p', 'review this:', '--stdin-append'], { env, stdin: 'the diff' }),
    ).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(fake.requests.at(-1)?.lastUserText).toBe('review this:\n\nthe diff');

    // Go's behaviour otherwise: no word when stdin is not piped, stdin as the message when it is.
    expect(await runAxe(base, { env })).toMatchObject({ code: 0, stderr: '' });
    expect(await runAxe(base, { env, stdin: 'from stdin' })).toMatchObject({ code: 0, stderr: '' });
    expect(fake.requests.at(-1)?.lastUserText).toBe('from stdin');
  });
});

describe('signals', () => {
  it('SIGHUP during run_command: exit 129 and the command is gone', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    home.file('work/.keep', '');
    home.agent('solo', agentToml('solo', { extra: [`workdir = "${workdir}"`, 'tools = ["run_command"]'] }));
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'run_command', arguments: { command: 'echo $$ > pid.txt; exec sleep 60' } }] }
        : { text: 'done' },
    );
    const axe = startAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    const pidFile = path.join(workdir, 'pid.txt');
    await waitFor(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'));
    const pid = Number(readFileSync(pidFile, 'utf8'));
    expect(isRunning(pid)).toBe(true);
    axe.kill('SIGHUP');
    const result = await axe.done;
    expect(result.code).toBe(129);
    expect(result.stderr).toContain('interrupted by SIGHUP');
    await waitFor(() => !isRunning(pid), 2000);
  });
});
