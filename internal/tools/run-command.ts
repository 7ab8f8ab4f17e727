import { spawn } from 'node:child_process';
import { withTimeout } from '../abort.js';
import { optionalInteger, requiredString } from './args.js';
import { killChild, PIPE_DRAIN_MS, trackChild, untrackChild } from './child-reaper.js';
import { checkCommand } from './command-guard.js';
import { defineTool, objectSchema } from './define-tool.js';
import { MAX_OUTPUT_BYTES, truncationMarker } from './output-limit.js';

/** Per-command time limit (Go axe has only the run's): the default, and the most a call may ask for. */
const DEFAULT_COMMAND_TIMEOUT_S = 120;
export const MAX_COMMAND_TIMEOUT_S = 600;
/** The only variables a command inherits: no API key, token or secret reaches it. */
const INHERITED_ENV = ['PATH', 'LANG', 'LC_ALL', 'TERM', 'USER', 'LOGNAME'] as const;

export const runCommandTool = defineTool(
  {
    name: 'run_command',
    description:
      "Execute a shell command in the agent's working directory via sh -c and return the combined stdout/stderr output. Absolute paths outside the working directory, parent traversal (..) escaping it and ~ are rejected; use relative paths.",
    parameters: objectSchema(
      {
        command: { type: 'string', description: 'The shell command to execute.' },
        timeout: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_COMMAND_TIMEOUT_S,
          description: `Seconds before the command is killed (default ${DEFAULT_COMMAND_TIMEOUT_S}, at most ${MAX_COMMAND_TIMEOUT_S}).`,
        },
      },
      ['command'],
    ),
  },
  async (args, context) => {
    const command = requiredString(args, 'command');
    const timeout = optionalInteger(args, 'timeout', DEFAULT_COMMAND_TIMEOUT_S, 1);
    if (timeout > MAX_COMMAND_TIMEOUT_S) {
      throw new Error(`"timeout" must be at most ${MAX_COMMAND_TIMEOUT_S} seconds, got ${timeout}`);
    }
    const refusal = checkCommand(context.workdir, command);
    if (refusal) throw new Error(refusal);
    const timed = withTimeout(context.signal, timeout * 1000);
    let shell: ShellOutcome;
    try {
      shell = await runShell(
        command,
        context.workdir,
        traced(commandEnv(context.workdir, context.env, context.artifacts?.dir), context.traceparent),
        timed.signal,
      );
    } finally {
      timed.dispose();
    }
    const { output, exitCode, signal } = shell;
    if (context.signal.aborted) throw new Error('cancelled');
    if (timed.timedOut()) return { content: `timed out after ${timeout}s\n${output}`, isError: true };
    if (exitCode === 0) return output;
    const status = signal ? `killed by ${signal}` : `exit code ${exitCode}`;
    return { content: `${status}\n${output}`, isError: true };
  },
);

/** Go axe's sandbox env: HOME and TMPDIR are the workdir, a few variables pass, no secrets. */
export function commandEnv(
  workdir: string,
  env: NodeJS.ProcessEnv,
  artifactDir?: string,
): Record<string, string> {
  const reduced: Record<string, string> = { HOME: workdir, TMPDIR: workdir };
  for (const key of INHERITED_ENV) {
    const value = env[key];
    if (value) reduced[key] = value;
  }
  // Go axe's spec 042: scripts reach the agent's artifact directory through this variable.
  if (artifactDir !== undefined) reduced.AXE_ARTIFACT_DIR = artifactDir;
  return reduced;
}

/** A traced run's command sees its call's span as its parent (`TRACEPARENT`, as OpenTelemetry reads it). */
function traced(env: Record<string, string>, traceparent: string | undefined): Record<string, string> {
  return traceparent === undefined ? env : { ...env, TRACEPARENT: traceparent };
}

interface ShellOutcome {
  output: string;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

/** Runs `sh -c` in its own process group; the whole group is killed on abort and when sh exits. */
function runShell(
  command: string,
  cwd: string,
  env: Record<string, string>,
  signal: AbortSignal,
): Promise<ShellOutcome> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new Error('cancelled'));
    const child = spawn('sh', ['-c', command], {
      cwd,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    const output = outputCollector();
    child.stdout.on('data', output.collect);
    child.stderr.on('data', output.collect);
    if (pid !== undefined) trackChild(pid, 'group');
    let exit: { code: number | null; signal: NodeJS.Signals | null } = { code: null, signal: null };
    let drainTimer: NodeJS.Timeout | undefined;
    let settled = false;
    /** Stops listening; false when the call has settled already. */
    const release = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(drainTimer);
      signal.removeEventListener('abort', endGroup);
      if (pid !== undefined) untrackChild(pid);
      return true;
    };
    const finish = (): void => {
      if (!release()) return;
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ output: output.text(), exitCode: exit.code, signal: exit.signal });
    };
    function endGroup(): void {
      if (pid !== undefined) killChild(pid, 'group');
      drainTimer ??= setTimeout(finish, PIPE_DRAIN_MS);
    }
    signal.addEventListener('abort', endGroup, { once: true });
    // Background children of the command would keep the pipes open: the group ends with sh.
    child.on('exit', (code, sig) => {
      exit = { code, signal: sig };
      endGroup();
    });
    child.on('error', (error) => {
      if (release()) reject(new Error(`cannot run sh: ${error.message}`));
    });
    child.on('close', finish);
  });
}

/** Combined output, kept up to MAX_OUTPUT_BYTES, with a marker when more came. */
function outputCollector(): { collect: (chunk: Buffer) => void; text: () => string } {
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  const collect = (chunk: Buffer): void => {
    if (kept >= MAX_OUTPUT_BYTES) {
      truncated = true;
      return;
    }
    const room = MAX_OUTPUT_BYTES - kept;
    if (chunk.length > room) truncated = true;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    chunks.push(part);
    kept += part.length;
  };
  const text = (): string => {
    const all = Buffer.concat(chunks).toString('utf8');
    return truncated ? all + truncationMarker() : all;
  };
  return { collect, text };
}
