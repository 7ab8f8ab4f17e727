import type { Socket } from 'node:net';
import { Readable } from 'node:stream';
import { onAbort } from '../abort.js';
import { headersOf } from './response-headers.js';
import { type ResponseHead, ResponseParser, type ResponseSink } from './response-parser.js';

export interface HttpResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: ResponseBody;
}

/** What a connection tells the pool it belongs to. */
export interface ConnectionOwner {
  /** The exchange is over and the connection may carry another. */
  release(connection: Connection): void;
  /** The connection is closed or closing: never hand it out again. */
  forget(connection: Connection): void;
}

/** Node's errors for a connection that ends early, with the same messages and codes. */
function hangUp(): Error {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}
export function cutShort(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/**
 * One keep-alive connection: one request at a time, its response parsed as it arrives. The
 * response's head resolves `send`; its body flows through a Readable with backpressure (the
 * socket pauses while the reader lags). Once the body is read whole the connection goes back to
 * its pool, unless the server asked to close it or sent more than the response. An abort, a
 * malformed response, an early end or a body its reader destroys closes the connection.
 */
export class Connection implements ResponseSink {
  readonly #parser = new ResponseParser();
  #active = false;
  #written = false;
  /** Exchanges this connection has carried, the current one included. */
  #exchanges = 0;
  /** A byte of the current exchange's response has arrived. */
  #heard = false;
  #resolve: ((response: HttpResponse) => void) | undefined;
  #reject: ((error: Error) => void) | undefined;
  #body: ResponseBody | undefined;
  /** Stops following the exchange's signal. */
  #unfollow: (() => void) | undefined;
  /** The server's `Keep-Alive: timeout=N` for this connection, in seconds. */
  #keepAliveSeconds: number | undefined;
  /** When an idle connection is too old to trust: a second before the server said it closes it. */
  #staleAt = Number.POSITIVE_INFINITY;
  readonly #onAbort = () => this.#fail(new Error('request aborted'));

  constructor(
    readonly socket: Socket,
    /** The pool's name for the server and settings this connection was opened with. */
    readonly key: string,
    private readonly owner: ConnectionOwner,
    /**
     * The socket `socket` runs over, when it is not a socket of its own: a proxy's connection that
     * carries a tunnel. It holds the process open or not, and is closed with the connection.
     */
    readonly carrier?: Socket,
  ) {
    socket.on('data', (data: Buffer) => this.#onData(data));
    socket.on('end', () => this.#onEnd());
    socket.on('close', () => this.#onClose());
    socket.on('error', (error: Error) => this.#fail(error));
  }

  /** Whether the connection can still carry a request. */
  get usable(): boolean {
    return (
      !this.#active && !this.socket.destroyed && this.socket.writable && performance.now() < this.#staleAt
    );
  }

  /**
   * The last exchange went out on a connection an earlier one had used, and the server closed it
   * without a byte of answer: most likely it closed the idle connection as the request left (its
   * keep-alive timeout), so the request can go again on a new connection. (Go's transport does
   * this only for a request it wrote no byte of, or one it may replay; see pool.ts.)
   */
  get closedUnanswered(): boolean {
    return this.#exchanges > 1 && !this.#heard && !this.#active;
  }

  /** Sends a request; resolves with its response's head once it arrives. `onWritten` once the request is out. */
  send(head: string, payload: Buffer, signal: AbortSignal, onWritten?: () => void): Promise<HttpResponse> {
    this.#active = true;
    this.#written = false;
    this.#exchanges++;
    this.#heard = false;
    this.#body = undefined;
    this.#parser.expect(this);
    this.socket.ref();
    this.carrier?.ref();
    return new Promise((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
      // One listener on a signal however many requests follow it (see onAbort): a fan-out's children share theirs.
      this.#unfollow = onAbort(signal, this.#onAbort);
      const socket = this.socket;
      if (socket.destroyed) {
        this.#fail(hangUp());
        return;
      }
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(payload, (error) => {
        if (error) return;
        this.#written = true;
        onWritten?.();
      });
      socket.uncork();
    });
  }

  onHead(head: ResponseHead): void {
    const body = new ResponseBody(this);
    this.#body = body;
    const resolve = this.#resolve;
    this.#resolve = undefined;
    this.#reject = undefined;
    const headers = headersOf(head.rawHeaders);
    this.#keepAliveSeconds = keepAliveSeconds(headers['keep-alive']);
    resolve?.({ status: head.status, headers, body });
  }

  onBody(chunk: Buffer): void {
    if (!this.#body?.push(chunk)) this.socket.pause();
  }

  onEnd(): void {
    this.#body?.push(null);
  }

  /** The body's reader wants more. */
  resumeFor(body: ResponseBody): void {
    if (body === this.#body && this.#active) this.socket.resume();
  }

  /** The body's reader destroyed it: unless the response was already read whole, the connection closes. */
  abandonedBy(body: ResponseBody, error: Error | null): void {
    if (body === this.#body && this.#active) this.#fail(error ?? cutShort());
  }

  /** Ends the connection; an exchange in flight fails as Node's does when its socket is destroyed. */
  destroy(): void {
    this.socket.destroy();
    this.carrier?.destroy();
  }

  /** An idle connection does not keep the process alive. */
  unref(): void {
    this.socket.unref();
    this.carrier?.unref();
  }

  #onData(data: Buffer): void {
    if (!this.#active) {
      // A server has nothing to say on an idle connection: whatever it is, the connection is done.
      this.#close();
      return;
    }
    this.#heard = true;
    try {
      this.#parser.push(data);
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    // A reader that gave up on the body inside this push has failed the exchange already.
    if (this.#parser.complete && this.#active) this.#complete();
  }

  /** The server ended the connection: the end of a body read until then, else a failure. */
  #onEnd(): void {
    if (this.#active && this.#parser.finish()) this.#complete();
    else this.#onClose();
  }

  #onClose(): void {
    if (this.#active) this.#fail(this.#body === undefined ? hangUp() : cutShort());
    else this.#close();
  }

  #complete(): void {
    // The server's Keep-Alive timeout runs from now, the connection's first idle moment.
    const seconds = this.#keepAliveSeconds;
    this.#staleAt =
      seconds === undefined ? Number.POSITIVE_INFINITY : performance.now() + seconds * 1000 - 1000;
    const reusable = this.#parser.reusable && this.#written && (seconds === undefined || seconds > 1);
    this.#finishExchange();
    if (!reusable) {
      this.#close();
      return;
    }
    this.socket.resume();
    this.unref();
    this.owner.release(this);
  }

  #fail(error: Error): void {
    if (this.#active) {
      const reject = this.#reject;
      const body = this.#body;
      this.#finishExchange();
      if (reject) reject(error);
      else if (body) failBody(body, error);
    }
    this.#close();
  }

  #finishExchange(): void {
    this.#active = false;
    this.#resolve = undefined;
    this.#reject = undefined;
    this.#unfollow?.();
    this.#unfollow = undefined;
  }

  #close(): void {
    this.owner.forget(this);
    this.destroy();
  }
}

/**
 * The `timeout=N` of a `Keep-Alive` header: a connection idle that long is closed by its server.
 * It is reused until a second before (as Node's agent reads the hint), so a request does not go
 * out on a connection the server is closing; not at all when N is 1 or less.
 */
function keepAliveSeconds(keepAlive: string | undefined): number | undefined {
  const seconds = keepAlive === undefined ? undefined : /^timeout=(\d+)/.exec(keepAlive)?.[1];
  return seconds === undefined ? undefined : Number(seconds);
}

/**
 * A body fails with `error`. One nobody listens to yet may not have reached its reader at all: a
 * malformed chunk in the same read as the head fails it before `await post(…)` has resumed. Its
 * failure then waits until the reader's code after that await has run (the promise's reactions
 * run before the next turn of the event loop), so an 'error' listener it attaches hears it.
 */
function failBody(body: ResponseBody, error: Error): void {
  if (body.listenerCount('error') > 0) body.destroy(error);
  else setImmediate(() => body.destroy(error));
}

/**
 * What a body holds that its reader has not taken before the connection stops reading the socket.
 * Set here, not inherited from Node: Node 22 raised the default from 16 KiB to 64 KiB, and a run of
 * 512 sub-agents whose reader lags would hold four times as much.
 */
export const BODY_HIGH_WATER_MARK = 16 * 1024;

/**
 * A response's body as a stream; what its reader does to it reaches the connection. A body can
 * fail before its reader has it (a malformed chunk in the same packet as the head): its failure
 * then waits a turn (`failBody`), and, as Node's `IncomingMessage` does, it emits no 'error'
 * nobody listens to even then; a reader that came later finds the error in `errored`.
 */
export class ResponseBody extends Readable {
  constructor(private readonly connection: Connection) {
    super({ highWaterMark: BODY_HIGH_WATER_MARK });
  }

  override _read(): void {
    this.connection.resumeFor(this);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.connection.abandonedBy(this, error);
    callback(this.listenerCount('error') > 0 ? error : null);
  }
}
