import { readFileSync, readlinkSync } from 'node:fs';
import { ExitCode } from '../internal/errors.js';
import { fsErrorReason } from '../internal/fs/fs-error.js';

/**
 * stdout and stderr as a Unix tool treats them: a reader that went away (`axe run x | head -c 1`)
 * ends axe quietly with 141, as git does (128 + SIGPIPE); a stdout that cannot take the answer (a
 * full disk, a closed descriptor) is one line on stderr and exit 1, never a stack trace or a
 * silent success.
 */
export function handleOutputErrors(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(ExitCode.sigpipe);
    process.stderr.write(`axe: cannot write to stdout: ${fsErrorReason(error)}\n`);
    process.exit(ExitCode.runtime);
  });
  // Nobody is left to tell about a broken stderr.
  process.stderr.on('error', () => {});
  if (stdoutClosed()) {
    process.stderr.write(
      'axe: stdout is closed: nothing could be printed (redirect it to /dev/null to discard it)\n',
    );
    process.exit(ExitCode.runtime);
  }
}

/**
 * Node reopens a closed stdout as /dev/null read-write, where a shell's `>/dev/null` opens it
 * write-only; daemon(3) points 0, 1 and 2 at one read-write /dev/null, which is a discarded
 * stdout, not a closed one. Linux only; elsewhere a closed stdout goes unnoticed.
 */
function stdoutClosed(): boolean {
  try {
    if (readlinkSync('/proc/self/fd/1') !== '/dev/null') return false;
    const flags = /^flags:\s+([0-7]+)/m.exec(readFileSync('/proc/self/fdinfo/1', 'utf8'))?.[1] ?? '0';
    const readWrite = (Number.parseInt(flags, 8) & 0o3) === 0o2;
    return readWrite && readlinkSync('/proc/self/fd/2') !== '/dev/null';
  } catch {
    return false;
  }
}
