import type { Socket } from 'node:net';
import type { TLSSocket, ConnectionOptions as TlsOptions } from 'node:tls';
import { Connection, type ConnectionOwner, type HttpResponse } from './connection.js';
import {
  authority,
  connectToProxy,
  type ForwardProxy,
  type ProxyConfig,
  proxyConfig,
  Tunnel,
} from './proxy.js';
import { parseTarget, postHead, type RequestTarget, serverName, viaProxy } from './request-head.js';

/**
 * The one HTTP client every provider uses: HTTP/1.1 over `node:net` and `node:tls` sockets, a
 * keep-alive pool per run, every request tied to an AbortSignal (an abort closes its connection),
 * redirects never followed, no socket timeouts (the run's deadline bounds every call). It does
 * what a model call needs and no more: `node:http` is never loaded, and a wide fan-out, which pays
 * the client once per child, ends sooner. `node:tls` is loaded only for https://.
 *
 * Behind a proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, read once per pool as Go reads them; see
 * proxy.ts) an https:// request goes through a CONNECT tunnel, TLS to the server inside it; an
 * http:// one goes to the proxy in absolute form. Connections are kept per proxy and server.
 */
export interface HttpPool {
  /**
   * POSTs `payload` to `url` with `headers` (sent as given, then Host, Connection and Content-Length
   * as Node adds them; see `postHead`); resolves with the response's head, its body to be read.
   * `onWritten` runs once the request is out.
   */
  post(
    url: string,
    headers: Readonly<Record<string, string | number>>,
    payload: Buffer,
    signal: AbortSignal,
    onWritten?: () => void,
  ): Promise<HttpResponse>;
  /**
   * Opens connections to `url`'s server until `count` stand idle (kept, or opening), for requests
   * about to come: a fan-out's children find them ready. Only a server this pool has already
   * connected to (its connection settings are those of that first connection); never more than
   * `count` idle whatever the number of callers.
   */
  warm(url: string, count: number): void;
  /**
   * Opens a connection to `url`'s server, as a request with `headers` would, when the pool has none
   * yet: an agent about to call its model gets DNS, TCP and TLS done while it reads its files and
   * starts its MCP servers. Its first request then goes out at once. Not when `headers` set Host,
   * which names the TLS server.
   */
  preconnect(url: string, headers: Record<string, string>): void;
  /**
   * Ends every connection now. Called when the run is over, so a request still in flight is one
   * nobody will read: it fails instead of keeping the process alive.
   */
  close(): Promise<void>;
}

// TCP keep-alive probes start after this long idle, as Node's agent sets them (`keepAliveMsecs`).
const KEEP_ALIVE_MS = 30_000;
// TLS sessions kept for resumption, as Node's https agent keeps them (`maxCachedSessions`).
const MAX_TLS_SESSIONS = 100;

/** How to open a connection to one server: the pool's key for it and its socket's settings. */
interface Route {
  key: string;
  target: RequestTarget;
  servername: string;
  /** The proxy its connections go through. */
  proxy: ForwardProxy | undefined;
}

/** Where a URL's requests go: the target as the request head names it, and the proxy on the way. */
interface Destination {
  target: RequestTarget;
  proxy: ForwardProxy | undefined;
}

/** A pool for one run; its proxies are those `env` sets (`process.env` unless given). */
export function createHttpPool(env: NodeJS.ProcessEnv = process.env): HttpPool {
  return new Pool(proxyConfig(env));
}

class Pool implements HttpPool, ConnectionOwner {
  readonly #destinations = new Map<string, Destination>();
  /** Idle connections by route key, the most recently used last (each one opening or open). */
  readonly #idle = new Map<string, Connection[]>();
  readonly #all = new Set<Connection>();
  /** The route last used for each server (`hostname:port`), for `warm`. */
  readonly #routes = new Map<string, Route>();
  readonly #sessions = new Map<string, Buffer>();
  #closed = false;

  constructor(private readonly proxies: ProxyConfig | undefined) {}

  post(
    url: string,
    headers: Readonly<Record<string, string | number>>,
    payload: Buffer,
    signal: AbortSignal,
    onWritten?: () => void,
  ): Promise<HttpResponse> {
    try {
      if (this.#closed) throw new Error('the HTTP pool is closed: the run is over');
      const destination = this.#destination(url);
      signal.throwIfAborted();
      const head = postHead(destination.target, headers, payload.byteLength);
      const route = this.#route(destination, headers);
      const connection = this.#take(route);
      // Told once, even when the request goes out a second time.
      let told = false;
      const once = onWritten
        ? () => {
            if (told) return;
            told = true;
            onWritten();
          }
        : undefined;
      return connection.send(head, payload, signal, once).catch((error: unknown) => {
        // A kept connection the server closed with no answer (its idle timeout, as the request
        // left): sent again once, at once, on a new connection; a failure then is the request's.
        // Never after an abort, nor once a byte of the answer came. Go's transport resends a POST
        // only when none of it was written, and otherwise leaves it to the caller's retries: a
        // server that closes an idle connection has not read the request that met the close.
        if (!connection.closedUnanswered || signal.aborted || this.#closed || !isConnectionLoss(error))
          throw error;
        return this.#open(route).send(head, payload, signal, once);
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  warm(url: string, count: number): void {
    if (this.#closed) return;
    try {
      const route = this.#routes.get(this.#destination(url).target.server);
      if (route) this.#fill(route, count);
    } catch {
      // Only a head start (and run from a socket's callback): a request connects, or fails, itself.
    }
  }

  preconnect(url: string, headers: Record<string, string>): void {
    if (this.#closed || Object.keys(headers).some((name) => name.toLowerCase() === 'host')) return;
    try {
      const destination = this.#destination(url);
      if (this.#routes.has(destination.target.server)) return;
      this.#fill(this.#route(destination, headers), 1);
    } catch {
      // An invalid URL, a connection that cannot be opened: the request says so itself.
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const connection of this.#all) connection.destroy();
    this.#all.clear();
    this.#idle.clear();
  }

  release(connection: Connection): void {
    if (this.#closed) {
      connection.destroy();
      return;
    }
    const idle = this.#idle.get(connection.key);
    if (idle) idle.push(connection);
    else this.#idle.set(connection.key, [connection]);
  }

  forget(connection: Connection): void {
    if (!this.#all.delete(connection)) return;
    const idle = this.#idle.get(connection.key);
    const at = idle?.indexOf(connection) ?? -1;
    if (at >= 0) idle?.splice(at, 1);
  }

  /** Throws for a URL that is not http:// or https://, and for a malformed proxy variable that applies. */
  #destination(url: string): Destination {
    let destination = this.#destinations.get(url);
    if (!destination) {
      const target = parseTarget(url);
      const proxy = this.proxies?.proxyFor(target);
      // Only an http:// request names its proxy's target in its head: an https:// one tunnels.
      destination = {
        target: proxy && target.protocol === 'http:' ? viaProxy(target, proxy.authorization) : target,
        proxy,
      };
      this.#destinations.set(url, destination);
    }
    return destination;
  }

  /** How a request to `target` with `headers` connects: by TLS, to the server its Host names; through its proxy. */
  #route({ target, proxy }: Destination, headers: Record<string, string | number>): Route {
    const servername = target.protocol === 'https:' ? serverName(target, headers) : '';
    const key = `${target.protocol}//${target.server}/${servername}${proxy ? ` via ${proxy.key}` : ''}`;
    let route = this.#routes.get(target.server);
    if (route?.key !== key) {
      route = { key, target, servername, proxy };
      this.#routes.set(target.server, route);
    }
    return route;
  }

  /** An idle connection for `route` (the last used of those open, else one still opening), or a new one. */
  #take(route: Route): Connection {
    const idle = this.#idle.get(route.key) ?? [];
    while (idle.length > 0) {
      let at = idle.length - 1;
      for (let i = at; i >= 0; i--) {
        if (!(idle[i] as Connection).socket.connecting) {
          at = i;
          break;
        }
      }
      const connection = idle.splice(at, 1)[0] as Connection;
      if (connection.usable) return connection;
      connection.destroy();
    }
    return this.#open(route);
  }

  /** Opens connections for `route` until `count` are idle. */
  #fill(route: Route, count: number): void {
    const idle = this.#idle.get(route.key) ?? [];
    this.#idle.set(route.key, idle);
    while (idle.length < count) {
      const connection = this.#open(route);
      connection.unref();
      idle.push(connection);
    }
  }

  #open(route: Route): Connection {
    if (route.proxy) return this.#openVia(route, route.proxy);
    const { target, servername, key } = route;
    let socket: Socket;
    if (target.protocol === 'https:') {
      socket = this.#startTls(key, servername, { host: target.hostname, port: target.port });
    } else {
      socket = process.getBuiltinModule('node:net').connect({ host: target.hostname, port: target.port });
    }
    return this.#adopt(tuned(socket), key);
  }

  /**
   * A connection through `proxy`: to the proxy itself for http:// (the request names its target),
   * or TLS to the target inside a CONNECT tunnel for https://.
   */
  #openVia(route: Route, proxy: ForwardProxy): Connection {
    const { target, servername, key } = route;
    const carrier = tuned(connectToProxy(proxy));
    if (target.protocol === 'http:') return this.#adopt(carrier, key);
    const tunnel = new Tunnel(carrier, proxy, authority(target));
    // `host` is the name the certificate must bear when there is no server name (an IP address).
    const tls = this.#startTls(key, servername, { socket: tunnel, host: target.hostname });
    // The tunnel's failure (the proxy refused, closed, or is unreachable) is the request's.
    tunnel.on('error', (error: Error) => tls.destroy(error));
    return this.#adopt(tls, key, carrier);
  }

  /** `socket` as one of the pool's connections (`carrier`: the proxy connection under its tunnel). */
  #adopt(socket: Socket, key: string, carrier?: Socket): Connection {
    const connection = new Connection(socket, key, this, carrier);
    this.#all.add(connection);
    return connection;
  }

  /** TLS for a route's connection: its server name, and the session kept from its last one. */
  #startTls(key: string, servername: string, options: TlsOptions): TLSSocket {
    if (servername !== '') options.servername = servername;
    const session = this.#sessions.get(key);
    if (session) options.session = session;
    const tls = process.getBuiltinModule('node:tls').connect(options);
    tls.on('session', (next: Buffer) => this.#keepSession(key, next));
    tls.once('error', () => this.#sessions.delete(key));
    return tls;
  }

  #keepSession(key: string, session: Buffer): void {
    this.#sessions.delete(key);
    if (this.#sessions.size >= MAX_TLS_SESSIONS) {
      const [oldest] = this.#sessions.keys();
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    this.#sessions.set(key, session);
  }
}

/** How a connection the server closed fails an exchange: reset, hung up, or a write into a closed one. */
function isConnectionLoss(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE' || code === 'ECONNABORTED';
}

/** The socket that touches the network: no Nagle delay, TCP keep-alive as Node's agent sets it. */
function tuned(socket: Socket): Socket {
  socket.setNoDelay(true);
  socket.setKeepAlive(true, KEEP_ALIVE_MS);
  return socket;
}
