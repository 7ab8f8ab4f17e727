import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest } from './types.js';

/**
 * One request / response pair: records when it finished and whether the client went away first,
 * and gives the writers waits that end when the connection closes.
 */
export class Exchange {
  readonly record: RecordedRequest;
  readonly res: ServerResponse;
  readonly requestId: string;
  /** Extra headers of the scripted reply (e.g. `x-openrouter-cache-status`), sent with a 200. */
  replyHeaders: Record<string, string> = {};
  private destroyedByServer = false;
  private isClosed = false;
  /** Called once when the connection closes: the waits in progress. */
  private readonly onClose = new Set<() => void>();

  constructor(req: IncomingMessage, res: ServerResponse, record: RecordedRequest) {
    this.record = record;
    this.res = res;
    this.requestId = `req_fake${String(record.index).padStart(6, '0')}`;
    res.on('finish', () => {
      record.finishedAt ??= Date.now();
    });
    res.on('close', () => {
      if (!res.writableFinished && !this.destroyedByServer) record.aborted = true;
      record.finishedAt ??= Date.now();
      this.close();
    });
    req.on('error', () => this.close());
  }

  /** True once the connection is closed (by either side). */
  get closed(): boolean {
    return this.isClosed;
  }

  /** Waits `ms`, or less if the connection closes meanwhile. */
  wait(ms: number | undefined): Promise<void> {
    if (!ms || ms <= 0 || this.isClosed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.onClose.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.onClose.add(done);
    });
  }

  /** Resolves when the client goes away (or the server is closed). */
  untilClosed(): Promise<void> {
    if (this.isClosed) return Promise.resolve();
    return new Promise((resolve) => this.onClose.add(resolve));
  }

  // Not an AbortController: aborting one makes a DOMException with its stack, ~50 µs for every
  // response of a bench's 512-way fan-out, on the cores the client is measured on.
  private close(): void {
    if (this.isClosed) return;
    this.isClosed = true;
    for (const waiter of [...this.onClose]) waiter();
    this.onClose.clear();
  }

  /** Destroys the socket on purpose: not counted as a client abort. */
  destroy(): void {
    this.destroyedByServer = true;
    this.res.socket?.destroy();
  }
}
