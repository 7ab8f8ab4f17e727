import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest } from './types.js';

/**
 * One request / response pair: records when it finished and whether the client went away first,
 * and gives the writers an abort signal and abortable waits.
 */
export class Exchange {
  readonly record: RecordedRequest;
  readonly res: ServerResponse;
  readonly requestId: string;
  /** Extra headers of the scripted reply (e.g. `x-openrouter-cache-status`), sent with a 200. */
  replyHeaders: Record<string, string> = {};
  private readonly controller = new AbortController();
  private destroyedByServer = false;

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
      this.controller.abort();
    });
    req.on('error', () => this.controller.abort());
  }

  /** True once the connection is closed (by either side). */
  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  /** Waits `ms`, or less if the connection closes meanwhile. */
  wait(ms: number | undefined): Promise<void> {
    if (!ms || ms <= 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const signal = this.controller.signal;
      function done(): void {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      }
      signal.addEventListener('abort', done);
    });
  }

  /** Resolves when the client goes away (or the server is closed). */
  untilClosed(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => this.controller.signal.addEventListener('abort', () => resolve()));
  }

  /** Destroys the socket on purpose: not counted as a client abort. */
  destroy(): void {
    this.destroyedByServer = true;
    this.res.socket?.destroy();
  }
}
