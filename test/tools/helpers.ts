import { mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
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

/** State and parent of a process from /proc/<pid>/stat, or undefined when it is gone. */
function procStat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state = '', ppid = '0'] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** Whether a process is running (a zombie waiting to be reaped counts as gone). */
export function isRunning(pid: number): boolean {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** Running children of a process. */
export function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => procStat(child)?.ppid === pid && isRunning(child));
}

/** Running children, grandchildren, … of a process. */
export function descendantsOf(pid: number): number[] {
  const children = childrenOf(pid);
  return [...children, ...children.flatMap(descendantsOf)];
}

export async function waitFor(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}
