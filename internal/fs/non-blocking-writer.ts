import { closeSync, writeSync } from 'node:fs';
import { fsErrorReason } from './fs-error.js';

/** What a reader that stopped reading may leave waiting behind the write in progress, before the rest is dropped. */
const QUEUED_MAX_BYTES = 4 * 2 ** 20;
/** How often what a pipe did not take is offered again. */
const RETRY_MS = 20;
/** After the last write, how long a slow reader still has to take what waits for it. */
const CLOSE_WAIT_MS = 2000;

/**
 * Writes to a descriptor opened non-blocking (openWritableSync): a regular file, or a FIFO or
 * terminal whose reader may be slow or stop reading. What the descriptor does not take at once
 * (EAGAIN) waits in memory, offered again every few milliseconds, so a write never blocks the event
 * loop: the run goes on, and hears Ctrl-C and its deadline. Past QUEUED_MAX_BYTES waiting behind
 * the write in progress (one write of any size is taken), or on any other write error, writing
 * stops and `stopped` is told why, once. At close, a slow reader has CLOSE_WAIT_MS more to take
 * the rest.
 */
export class NonBlockingWriter {
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private retry: NodeJS.Timeout | undefined;
  /** Writing stopped (said once): nothing more is written. */
  private stopped = false;
  /** When closed: until when a slow reader may still take what waits. */
  private closeDeadline: number | undefined;
  private fd: number;

  constructor(
    fd: number,
    private readonly onStop: (why: string) => void,
  ) {
    this.fd = fd;
  }

  write(bytes: Buffer): void {
    if (this.stopped || this.closeDeadline !== undefined) return;
    // What waits behind the write in progress: one write of any size (a large event) is offered
    // whole, to a regular file at once; only a backlog behind it tells a reader that stopped.
    const behind = this.queuedBytes - (this.queue[0]?.length ?? 0) + bytes.length;
    if (this.queue.length > 0 && behind > QUEUED_MAX_BYTES) {
      this.stop(`its reader stopped reading: ${this.queuedBytes + bytes.length} bytes were waiting`);
      return;
    }
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (this.retry === undefined) this.drain();
  }

  /** No more writes; the descriptor is closed once what waits is written, or given up on. */
  close(): void {
    if (this.closeDeadline !== undefined) return;
    this.closeDeadline = Date.now() + CLOSE_WAIT_MS;
    clearTimeout(this.retry);
    this.drain();
  }

  /** Writes what waits, as far as the descriptor takes it; tries the rest again a little later. */
  private drain(): void {
    this.retry = undefined;
    while (!this.stopped && this.queue.length > 0) {
      const head = this.queue[0] as Buffer;
      let written: number;
      try {
        written = writeSync(this.fd, head);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') break;
        this.stop(fsErrorReason(error));
        break;
      }
      this.queuedBytes -= written;
      if (written === head.length) this.queue.shift();
      else this.queue[0] = head.subarray(written);
    }
    const closing = this.closeDeadline !== undefined;
    if (closing && this.queue.length > 0 && Date.now() >= (this.closeDeadline as number)) {
      this.stop(`its reader stopped reading: ${this.queuedBytes} bytes were not written`);
    }
    if (this.queue.length === 0) {
      if (closing) this.release();
      return;
    }
    this.retry = setTimeout(() => this.drain(), RETRY_MS);
    // During the run, the run keeps the process alive; after it, only the close's wait may.
    if (!closing) this.retry.unref();
  }

  private stop(why: string): void {
    this.stopped = true;
    this.queue = [];
    this.queuedBytes = 0;
    this.onStop(why);
  }

  private release(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
