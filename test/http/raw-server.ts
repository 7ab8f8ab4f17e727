import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';

/** One request as a raw server read it off the wire. */
export interface RawRequest {
  /** The head as sent, read as latin1, its closing empty line included. */
  head: string;
  /** The request line's target. */
  path: string;
  /** The body, as long as its Content-Length says. */
  body: Buffer;
  /** The connection it came on: its index in `RawServer.sockets`. */
  connection: number;
  socket: Socket;
}

export interface RawServer {
  server: Server;
  port: number;
  url(path?: string): string;
  /** Every connection accepted, in order. */
  sockets: Socket[];
  /** Every request read whole, in order. */
  requests: RawRequest[];
  /** Resolves once `count` requests have arrived. */
  requested(count: number): Promise<RawRequest>;
  /** Resolves once `count` connections have been accepted. */
  connected(count: number): Promise<Socket>;
  close(): Promise<void>;
}

/**
 * A TCP server on 127.0.0.1 that reads HTTP/1.1 requests framed by Content-Length and hands each
 * to `respond`, which writes whatever bytes it likes on `request.socket`.
 */
export async function startRawServer(respond: (request: RawRequest) => void = () => {}): Promise<RawServer> {
  const sockets: Socket[] = [];
  const requests: RawRequest[] = [];
  let waiters: { ready: () => boolean; resolve: () => void }[] = [];
  const changed = () => {
    waiters = waiters.filter((waiter) => {
      if (!waiter.ready()) return true;
      waiter.resolve();
      return false;
    });
  };
  const until = <T>(ready: () => boolean, value: () => T): Promise<T> =>
    new Promise((resolve) => {
      waiters.push({ ready, resolve: () => resolve(value()) });
      changed();
    });

  const server = createServer((socket) => {
    const connection = sockets.push(socket) - 1;
    let pending = Buffer.alloc(0);
    socket.on('error', () => {});
    socket.on('data', (data: Buffer) => {
      pending = Buffer.concat([pending, data]);
      for (;;) {
        const end = pending.indexOf('\r\n\r\n');
        if (end === -1) break;
        const head = pending.subarray(0, end + 4).toString('latin1');
        const length = Number(/\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1] ?? 0);
        if (pending.length < end + 4 + length) break;
        const body = pending.subarray(end + 4, end + 4 + length);
        pending = pending.subarray(end + 4 + length);
        const request = { head, path: head.split(' ')[1] ?? '', body, connection, socket };
        requests.push(request);
        respond(request);
        changed();
      }
    });
    changed();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    port,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    sockets,
    requests,
    requested: (count) =>
      until(
        () => requests.length >= count,
        () => requests[count - 1] as RawRequest,
      ),
    connected: (count) =>
      until(
        () => sockets.length >= count,
        () => sockets[count - 1] as Socket,
      ),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resolves once `socket` has closed. */
export function closed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

export const NO_ANSWER = Symbol('no answer');

/** `promise`, or NO_ANSWER if it has not settled after `ms`: only to turn a hang into a failure. */
export function within<T>(promise: Promise<T>, ms = 500): Promise<T | typeof NO_ANSWER> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof NO_ANSWER>((resolve) => {
    timer = setTimeout(() => resolve(NO_ANSWER), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
