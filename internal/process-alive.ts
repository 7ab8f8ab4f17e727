import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** A process with this pid exists (one we may not signal counts: EPERM). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * What tells a process from another that later has its pid: after it died (a pid is reused), in
 * another container (axe is pid 1, or another small pid, in each of them), after a reboot. Every
 * field is optional: a check uses those it has.
 */
export interface ProcessIdentity {
  /** Its start time, in clock ticks since boot: field 22 of `/proc/<pid>/stat`. */
  startTicks?: number;
  /** `/proc/sys/kernel/random/boot_id`: a new one each boot (a container sees its host's). */
  bootId?: string;
  /** The machine's name (a container has its own). */
  hostname?: string;
}

/**
 * This process's identity, where `/proc` tells it (Linux); undefined where it does not (macOS,
 * Windows), or where the `/proc` mounted is another pid namespace's (its `self` is not our pid):
 * there a run is told by its pid alone.
 */
export function ownIdentity(): ProcessIdentity | undefined {
  const self = ownStat();
  if (self === undefined) return undefined;
  const bootId = thisBootId();
  return {
    startTicks: self.startTicks,
    ...(bootId !== undefined ? { bootId } : {}),
    hostname: hostname(),
  };
}

/**
 * Whether the process a record names is still there:
 * - `gone`: no process has its pid, or one has it that is another process (another start time
 *   or boot, or another machine's name);
 * - `alive`: a process has its pid and is the one `identity` names;
 * - `unverified`: a process has its pid and nothing tells whether it is the one — no identity
 *   (records written before axe kept one, or on a system without `/proc`: macOS), or none to
 *   compare it with here (no `/proc`, or a `/proc/<pid>` hidden from us: `hidepid`). Today's
 *   check by pid alone, which a reused pid fools.
 */
export type Liveness = 'gone' | 'alive' | 'unverified';

export function processLiveness(pid: number, identity: ProcessIdentity | undefined): Liveness {
  if (!processAlive(pid)) return 'gone';
  if (identity === undefined) return 'unverified';
  if (procIsOurs()) {
    // The boot id is the host's, also in a container: another one means another boot or machine.
    const bootId = thisBootId();
    if (identity.bootId !== undefined && bootId !== undefined && identity.bootId !== bootId) return 'gone';
    if (identity.startTicks !== undefined) {
      const now = procStat(pid);
      // Same boot, same pid, same start: the same process (also seen from another container
      // sharing its pid namespace, whatever that one's host name).
      if (now !== undefined) return now.startTicks === identity.startTicks ? 'alive' : 'gone';
    }
  }
  // Nothing in /proc to compare: another machine's (or container's) name still says it is not
  // this process.
  if (identity.hostname !== undefined && identity.hostname !== hostname()) return 'gone';
  return 'unverified';
}

/** `/proc/<pid>/stat`'s pid and start time; undefined when it cannot be read. */
function procStat(pid: number | 'self'): { pid: number; startTicks: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so fields count from the
  // last ')'; the first after it is field 3, so field 22 (starttime) is the 20th.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  const own = Number(text.slice(0, text.indexOf('(')).trim());
  const startTicks = Number(fields[19]);
  if (close < 0 || !Number.isSafeInteger(own) || !Number.isSafeInteger(startTicks)) return undefined;
  return { pid: own, startTicks };
}

/** `/proc/self/stat` once read: null when it cannot be, or names another pid. */
let selfStat: { pid: number; startTicks: number } | null | undefined;

/**
 * This process's `/proc` entry, when `/proc` is there and is our pid namespace's (`/proc/self` is
 * our pid): a `/proc` mounted for another namespace (`unshare -p` without `--mount-proc`) names
 * other processes by our pids.
 */
function ownStat(): { pid: number; startTicks: number } | undefined {
  if (selfStat === undefined) {
    const stat = procStat('self');
    selfStat = stat?.pid === process.pid ? stat : null;
  }
  return selfStat ?? undefined;
}

function procIsOurs(): boolean {
  return ownStat() !== undefined;
}

let bootIdRead = false;
let bootId: string | undefined;

function thisBootId(): string | undefined {
  if (!bootIdRead) {
    bootIdRead = true;
    try {
      bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
    } catch {
      bootId = undefined;
    }
  }
  return bootId;
}
