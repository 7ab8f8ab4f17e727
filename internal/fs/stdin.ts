import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { withTimeout } from '../abort.js';
import { AxeError, ConfigError, ExitCode } from '../errors.js';
import { fdKind, isTerminal } from './fd-kind.js';
import { fsErrorReason } from './fs-error.js';
import { formatBytes } from './read-bounded.js';
import { READ_LIMITS } from './read-limits.js';

/**
 * Piped stdin, read to the end; undefined on a terminal (never block waiting for a user). Bounded
 * like every other read: at most READ_LIMITS.stdin bytes (`yes | axe run` is an error, not a heap
 * that grows until the machine swaps), and no longer than the run's deadline or a signal.
 */
export function readPipedStdin(
  signal: AbortSignal,
  deadlineAt: number,
  timeoutSeconds: number,
): Promise<string | undefined> {
  if (isTerminal(0)) return Promise.resolve(undefined);
  const stdin = process.stdin;
  const timed = withTimeout(signal, deadlineAt - Date.now());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > READ_LIMITS.stdin) {
        fail(new ConfigError(`stdin: more than ${formatBytes(READ_LIMITS.stdin)} piped in (axe's limit)`));
      } else {
        chunks.push(chunk);
      }
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, total).toString('utf8'));
    };
    const onError = (error: Error): void =>
      fail(new ConfigError(`stdin: cannot read: ${fsErrorReason(error)}`));
    const onAbort = (): void =>
      fail(timed.timedOut() ? stdinTimeout(timeoutSeconds) : (signal.reason as Error));
    function cleanup(): void {
      timed.dispose();
      timed.signal.removeEventListener('abort', onAbort);
      stdin.off('data', onData).off('end', onEnd).off('error', onError);
    }
    function fail(error: Error): void {
      cleanup();
      stdin.destroy();
      reject(error);
    }
    if (timed.signal.aborted) return onAbort();
    timed.signal.addEventListener('abort', onAbort, { once: true });
    stdin.on('data', onData).once('end', onEnd).once('error', onError);
  });
}

function stdinTimeout(seconds: number): AxeError {
  return new AxeError(
    `timeout after ${seconds}s: stdin was still open (close it, or give the message with -p)`,
    ExitCode.provider,
  );
}

/** Stdin is a pipe, a socket or a file someone redirected: not a terminal, not /dev/null. */
export function stdinIsPiped(): boolean {
  return fdKind(0) !== undefined;
}

/**
 * Whether bytes are waiting on stdin right now, without blocking and without reading a terminal:
 * a regular file that is not empty, or a pipe with data in it (peeked through a second,
 * non-blocking open of the same pipe). Used only to tell the user that `-p` made axe ignore them.
 */
export function stdinHasData(): boolean {
  try {
    const info = fstatSync(0);
    if (info.isFile()) return info.size > 0;
    if (!info.isFIFO()) return false;
    const fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      return readSync(fd, Buffer.alloc(1)) > 0;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}
