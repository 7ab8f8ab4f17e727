import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { startFakeLlm } from '../fake-llm/index.js';
import type { FakeLlmOptions } from '../fake-llm/server.js';
import type { FakeLlm } from '../fake-llm/types.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const AXE_BIN = path.join(REPO_ROOT, 'dist/main.js');

export interface AxeResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
}

export interface RunningAxe {
  pid: number;
  /** Resolves when the process has exited. */
  done: Promise<AxeResult>;
  kill(signal: NodeJS.Signals): void;
  stderrSoFar(): string;
  stdoutSoFar(): string;
  /** Date.now() when the first stdout bytes arrived. */
  firstStdoutAt(): number | undefined;
  /** With `holdStdin`: writes `text` to stdin and closes it. */
  endStdin(text: string): void;
}

/** A temp XDG home and an agents dir, removed by `cleanup()`. */
export class TempHome {
  readonly root = mkdtempSync(path.join(os.tmpdir(), 'axe-run-'));
  readonly agentsDir = path.join(this.root, 'agents');
  readonly configDir = path.join(this.root, 'config', 'axe');

  constructor() {
    mkdirSync(this.agentsDir, { recursive: true });
    mkdirSync(this.configDir, { recursive: true });
  }

  /** Writes `<agentsDir>/<name>.toml`. */
  agent(name: string, toml: string): this {
    writeFileSync(path.join(this.agentsDir, `${name}.toml`), toml);
    return this;
  }

  file(relative: string, content: string): string {
    const full = path.join(this.root, relative);
    mkdirSync(path.dirname(full), { recursive: true });
    writeFileSync(full, content);
    return full;
  }

  /**
   * A clean environment: nothing inherited but PATH, so no real key or base URL can leak in.
   * `fakeUrl` points every provider at the fake LLM server.
   */
  env(fakeUrl?: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH ?? '',
      HOME: this.root,
      XDG_CONFIG_HOME: path.join(this.root, 'config'),
      XDG_DATA_HOME: path.join(this.root, 'data'),
      XDG_STATE_HOME: path.join(this.root, 'state'),
      XDG_CACHE_HOME: path.join(this.root, 'cache'),
    };
    if (fakeUrl) {
      Object.assign(env, {
        AXE_ANTHROPIC_BASE_URL: fakeUrl,
        ANTHROPIC_API_KEY: 'test-key',
        AXE_OPENAI_BASE_URL: `${fakeUrl}/v1`,
        OPENAI_API_KEY: 'test-key',
        AXE_OLLAMA_BASE_URL: fakeUrl,
      });
    }
    return { ...env, ...extra };
  }

  /** Where this home's run records are (`XDG_DATA_HOME` of `env`). */
  get runsDir(): string {
    return path.join(this.root, 'data', 'axe', 'runs');
  }

  /** The ids of the runs recorded so far, oldest first. */
  runIds(): string[] {
    try {
      return readdirSync(this.runsDir).sort();
    } catch {
      return [];
    }
  }

  cleanup(): void {
    rmSync(this.root, { recursive: true, force: true });
  }
}

export interface SpawnOptions {
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Piped to stdin then closed; undefined = stdin is /dev/null. */
  stdin?: string;
  /** stdin is a pipe left open until `endStdin` (instead of `stdin`). */
  holdStdin?: boolean;
  /** A command that starts axe (`nsenter …`): `[...wrap, node, main.js, ...args]`. */
  wrap?: string[];
}

export function startAxe(args: string[], options: SpawnOptions): RunningAxe {
  const started = Date.now();
  const [command = process.execPath, ...prefix] = [...(options.wrap ?? []), process.execPath];
  const child = spawn(command, [...prefix, AXE_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env,
    stdio: [options.stdin === undefined && !options.holdStdin ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let firstStdoutAt: number | undefined;
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    firstStdoutAt ??= Date.now();
    stdout += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  if (options.stdin !== undefined && child.stdin) child.stdin.end(options.stdin);
  const done = new Promise<AxeResult>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr, ms: Date.now() - started }));
  });
  return {
    pid: child.pid ?? -1,
    done,
    kill: (signal) => child.kill(signal),
    stderrSoFar: () => stderr,
    stdoutSoFar: () => stdout,
    firstStdoutAt: () => firstStdoutAt,
    endStdin: (text) => child.stdin?.end(text),
  };
}

export function runAxe(args: string[], options: SpawnOptions): Promise<AxeResult> {
  return startAxe(args, options).done;
}

/**
 * Polls until `check` holds (or throws after `timeoutMs`). The bound only turns a condition that
 * never comes into a failure before the test's own timeout: it is generous, for a busy machine
 * where starting axe alone can take seconds.
 */
export async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!holdsYet(check)) {
    if (Date.now() > deadline) throw new Error('waitFor: condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A check that reads a file or folder the run has not made yet (ENOENT) does not hold yet. */
function holdsYet(check: () => boolean): boolean {
  try {
    return check();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * For an e2e test file: checks the binary is built, and returns `setup()`, which gives each case
 * its own temp home and fake server (so cases can run concurrently), all removed after the file.
 */
export function e2eHomes(fakeOptions: FakeLlmOptions = {}): () => Promise<{ home: TempHome; fake: FakeLlm }> {
  const homes: TempHome[] = [];
  const servers: FakeLlm[] = [];
  beforeAll(() => {
    if (!existsSync(AXE_BIN)) throw new Error(`${AXE_BIN} is missing: run \`npm run build\` first`);
  });
  afterAll(async () => {
    await Promise.all(servers.map((fake) => fake.close()));
    for (const home of homes) home.cleanup();
  });
  return async () => {
    const home = new TempHome();
    const fake = await startFakeLlm(fakeOptions);
    homes.push(home);
    servers.push(fake);
    return { home, fake };
  };
}

/** The non-empty lines of an output. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}
