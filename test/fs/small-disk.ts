import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** statfs's type of a tmpfs. */
const TMPFS_MAGIC = 0x01021994;

export interface SmallDisk {
  /** A folder on the small tmpfs, usable by this process and by any it starts. */
  root: string;
  /**
   * The folder as a process started with `enter` sees it: `root` unless the tmpfs is in a
   * namespace, where `root` is a path through /proc that a program which resolves real paths
   * (axe's file tools) would follow out of the tmpfs.
   */
  inside: string;
  /** The command prefix that starts a program where `inside` is the tmpfs (none as root). */
  enter: string[];
  unmount(): void;
}

/**
 * A tmpfs of `size` (e.g. '64k') at a fresh folder: a real full disk for tests, whoever runs them.
 * As root it is mounted here. Any other user mounts it in a mount namespace of its own (a user
 * namespace, `unshare -Urm`, which most Linux kernels allow), held by a `sleep` that lives in it;
 * the folder is then reached through that process's root, `/proc/<pid>/root/<folder>`, which the
 * kernel resolves in the namespace. When neither works it returns why, for the test to skip with.
 */
export function smallDisk(size: string): SmallDisk | string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-full-'));
  if (process.getuid?.() === 0) {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
    return {
      root: dir,
      inside: dir,
      enter: [],
      unmount: () => {
        execFileSync('umount', ['-l', dir]);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  let pid: number;
  try {
    // `unshare` execs the shell, which execs `sleep`: the pid printed is the holder's. It sleeps
    // for at most ten minutes should the test never unmount.
    const holder = `unshare -Urm sh -c 'mount -t tmpfs -o size="$1" tmpfs "$0" && exec sleep 600' "$0" "$1" </dev/null >/dev/null 2>&1 & echo $!`;
    pid = Number(execFileSync('sh', ['-c', holder, dir, size], { encoding: 'utf8' }).trim());
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    return `no small disk: not root, and unshare failed (${(error as Error).message})`;
  }
  const root = `/proc/${pid}/root${dir}`;
  const enter = ['nsenter', '-t', String(pid), '-U', '-m', '--preserve-credentials'];
  const unmount = (): void => {
    try {
      process.kill(pid);
    } catch {
      // already gone
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // The mount is made by the holder a moment after it starts; it fails at once when the kernel
  // does not allow user namespaces (the holder is gone then).
  for (let tries = 0; tries < 500; tries++) {
    try {
      if (statfsSync(root).type === TMPFS_MAGIC) return { root, inside: dir, enter, unmount };
    } catch {
      // the holder is gone: the mount failed
      break;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
  }
  unmount();
  return 'no small disk: not root, and this kernel does not let a user mount a tmpfs in a user namespace (unshare -Urm)';
}
