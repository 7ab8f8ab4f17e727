import { fstatSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import { ExitCode } from '../internal/errors.js';
import { fdKind } from '../internal/fs/fd-kind.js';
import { fsErrorReason } from '../internal/fs/fs-error.js';

/** What a pipe holds at the least (one page; POSIX's PIPE_BUF): written to it, never a wait. */
const PAGE_BYTES = 4096;

/**
 * stdout and stderr as axe writes them. Making `process.stdout`'s stream for a pipe loads Node's
 * net and stream modules, a few ms of every start for a handful of lines, so a file is written
 * with write(2), and so is a pipe or socket up to one page in all: the least any pipe holds, so
 * those writes never block, even with nobody reading yet. More goes through Node's stream, which
 * queues what the reader has not taken instead of blocking: a stalled reader never keeps axe from
 * hearing Ctrl-C or its deadline. A terminal (any character device but /dev/null, /dev/full and
 * the like) goes through the stream from the start. The stream writes at once what the descriptor takes, so the
 * order of lines is kept; a descriptor another process made non-blocking and filled (EAGAIN)
 * hands the rest, and every later line, to the stream.
 *
 * As a Unix tool treats them: a reader that went away (`axe run x | head -c 1`) ends axe quietly
 * with 141, as git does (128 + SIGPIPE); a stdout that cannot take the answer (a full disk, a
 * closed descriptor) is one line on stderr and exit 1, never a stack trace or a silent success.
 */
class FdOutput {
  /** `pipe`: a pipe or socket, written directly while `pipeBytesLeft` lasts. */
  private kind: 'file' | 'pipe' | 'stream' | undefined;
  private pipeBytesLeft = PAGE_BYTES;
  private opened: NodeJS.WriteStream | undefined;

  constructor(
    private readonly fd: 1 | 2,
    private readonly open: () => NodeJS.WriteStream,
    private readonly failed: (error: NodeJS.ErrnoException) => void,
  ) {}

  write(text: string): void {
    const kind = this.kindOf();
    const bytes = kind === 'stream' ? undefined : Buffer.from(text);
    if (bytes === undefined || (kind === 'pipe' && bytes.length > this.pipeBytesLeft)) {
      this.kind = 'stream';
      this.stream().write(bytes ?? text);
      return;
    }
    if (kind === 'pipe') this.pipeBytesLeft -= bytes.length;
    let done = 0;
    while (done < bytes.length) {
      try {
        done += writeSync(this.fd, bytes, done);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          this.kind = 'stream';
          this.stream().write(bytes.subarray(done));
        } else {
          this.failed(error as NodeJS.ErrnoException);
        }
        return;
      }
    }
  }

  get isTTY(): boolean {
    return this.kindOf() === 'stream' && this.stream().isTTY === true;
  }

  get columns(): number | undefined {
    return this.isTTY ? this.stream().columns : undefined;
  }

  get rows(): number | undefined {
    return this.isTTY ? this.stream().rows : undefined;
  }

  /** The stream itself, for what needs one (readline on a terminal). */
  stream(): NodeJS.WriteStream {
    this.opened ??= this.open();
    return this.opened;
  }

  private kindOf(): 'file' | 'pipe' | 'stream' {
    this.kind ??= fdKind(this.fd) ?? (isMemoryDevice(this.fd) ? 'file' : 'stream');
    return this.kind;
  }
}

function stdoutFailed(error: NodeJS.ErrnoException): never {
  if (error.code === 'EPIPE') process.exit(ExitCode.sigpipe);
  stderr.write(`axe: cannot write to stdout: ${fsErrorReason(error)}\n`);
  process.exit(ExitCode.runtime);
}

export const stdout = new FdOutput(1, () => process.stdout.on('error', stdoutFailed), stdoutFailed);

// Nobody is left to tell about a broken stderr.
export const stderr = new FdOutput(
  2,
  () => process.stderr.on('error', () => {}),
  () => {},
);

/**
 * /dev/null, /dev/full, /dev/zero (Linux's memory devices, major number 1): written with write(2)
 * as a file is, which never blocks, so that a failed write (/dev/full: ENOSPC) is heard before
 * axe exits, not in a stream's error event that the exit would outrun.
 */
function isMemoryDevice(fd: number): boolean {
  try {
    const stats = fstatSync(fd);
    return stats.isCharacterDevice() && process.platform === 'linux' && stats.rdev >> 8 === 1;
  } catch {
    return false;
  }
}

/** At start: a closed stdout is one line and exit 1 before anything runs. */
export function checkStdoutOpen(): void {
  if (stdoutClosed()) {
    stderr.write(
      'axe: stdout is closed: nothing could be printed (redirect it to /dev/null to discard it)\n',
    );
    process.exit(ExitCode.runtime);
  }
}

/**
 * Node reopens a closed stdout as /dev/null read-write, where a shell's `>/dev/null` opens it
 * write-only; daemon(3) points 0, 1 and 2 at one read-write /dev/null, which is a discarded
 * stdout, not a closed one. Node 20, 22 and 24 alike. Linux only; elsewhere a closed stdout goes
 * unnoticed.
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
