import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JsonObject } from '../../internal/provider/types.js';
import type { Tool, ToolContext, ToolOutput } from '../../internal/tools/types.js';

/** A temp dir holding `work/` (the sandbox root) and `outside/` (what must never be touched). */
export function makeSandbox(): { root: string; workdir: string; outside: string; cleanup: () => void } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'axe-tools-')));
  const workdir = join(root, 'work');
  const outside = join(root, 'outside');
  mkdirSync(workdir);
  mkdirSync(outside);
  return { root, workdir, outside, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export function toolContext(workdir: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workdir,
    signal: new AbortController().signal,
    allowedHosts: [],
    env: { PATH: process.env.PATH },
    ...overrides,
  };
}

export function call(tool: Tool, args: JsonObject, context: ToolContext): Promise<ToolOutput> {
  return tool.execute(args, context);
}

/** Whether a process is running (a zombie waiting to be reaped counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

export async function waitFor(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}
