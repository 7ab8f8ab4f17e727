/**
 * Process groups / processes the tools started and have not seen end. If axe exits before a
 * tool could clean up (a second Ctrl-C, an exit from cmd/), they are killed on the way out so no
 * command or MCP server outlives the run.
 */
const live = new Map<number, 'group' | 'process'>();
let hooked = false;

export function trackChild(pid: number, kind: 'group' | 'process'): void {
  live.set(pid, kind);
  if (!hooked) {
    hooked = true;
    process.once('exit', killAllTracked);
  }
}

export function untrackChild(pid: number): void {
  live.delete(pid);
}

/** Signals a child (its whole group for 'group'), SIGKILL by default; an already-gone child is fine. */
export function killChild(pid: number, kind: 'group' | 'process', signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(kind === 'group' ? -pid : pid, signal);
  } catch {
    // ESRCH: it is gone already.
  }
}

function killAllTracked(): void {
  for (const [pid, kind] of live) killChild(pid, kind);
  live.clear();
}

/**
 * How long a child's pipes may stay open once it has exited (or its group was killed): a process
 * that left its group (setsid, a daemon) can hold them for ever, and 'close' would never come.
 */
export const PIPE_DRAIN_MS = 150;
