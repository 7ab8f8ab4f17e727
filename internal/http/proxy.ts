import type { BlockList, Socket } from 'node:net';
import { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { isLoopbackHost } from '../loopback.js';
import { parseTarget, type RequestTarget, serverName } from './request-head.js';
import { MAX_HEAD_BYTES } from './response-parser.js';

/**
 * Proxies from the environment, as Go's `http.ProxyFromEnvironment` (golang.org/x/net/http/httpproxy)
 * reads them: HTTPS_PROXY (else https_proxy) for https:// URLs, HTTP_PROXY (else http_proxy) for
 * http:// URLs, NO_PROXY (else no_proxy) for the hosts reached directly; localhost and loopback
 * addresses never through a proxy. A proxy URL may be `host:port` alone (http:// is assumed), an
 * http:// or an https:// URL, with `user:password@` for Basic authentication.
 */

/** One proxy, parsed from its variable. */
export interface ForwardProxy {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** The TLS server name of an https:// proxy ('' for an IP address). */
  servername: string;
  /** `Basic …` when the URL has user info. */
  authorization: string | undefined;
  /** The pool's name for it: no credentials. */
  key: string;
  /** How errors name it: its URL with the credentials masked. */
  shown: string;
}

/** A variable whose value is not a proxy URL: its requests fail with `message`. */
interface Malformed {
  message: string;
}

type Setting = ForwardProxy | Malformed | undefined;

export interface ProxyConfig {
  /** The proxy for a request to `target`, or undefined to connect directly; throws for a malformed variable. */
  proxyFor(target: RequestTarget): ForwardProxy | undefined;
}

/** The value of the first of `names` set and not empty, and its name, as Go's getEnvAny reads them. */
function firstSet(env: NodeJS.ProcessEnv, names: string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name];
    if (value !== undefined && value !== '') return [name, value];
  }
  return undefined;
}

/** The proxy settings of `env`, read once (a pool's); undefined when no proxy is set. */
export function proxyConfig(env: NodeJS.ProcessEnv): ProxyConfig | undefined {
  const https = firstSet(env, ['HTTPS_PROXY', 'https_proxy']);
  const http = firstSet(env, ['HTTP_PROXY', 'http_proxy']);
  if (!https && !http) return undefined;
  const bypass = noProxy(firstSet(env, ['NO_PROXY', 'no_proxy'])?.[1] ?? '');
  const settings: Record<'http:' | 'https:', Setting> = {
    'https:': https && parseProxy(https[0], https[1]),
    'http:': http && parseProxy(http[0], http[1]),
  };
  return {
    proxyFor(target) {
      const setting = settings[target.protocol];
      if (setting === undefined || !useProxy(target, bypass)) return undefined;
      if ('message' in setting) throw Object.assign(new Error(setting.message), { code: 'ERR_PROXY' });
      return setting;
    },
  };
}

/** A value with any user info masked, for a value that is not a URL (redactUrl shows those as they are). */
function maskUserInfo(value: string): string {
  return value.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)?[^/?#]*@/, '$1***@');
}

function parseProxy(variable: string, value: string): ForwardProxy | Malformed {
  const invalid = (why: string): Malformed => ({
    message: `invalid proxy URL in ${variable}: ${JSON.stringify(maskUserInfo(value))} (${why})`,
  });
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(value)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    return invalid(`scheme "${scheme}" is not supported: use http:// or https://`);
  }
  let url: URL;
  try {
    // `host:port` alone is an http:// proxy, as Go reads it.
    url = new URL(scheme === undefined ? `http://${value}` : value);
  } catch {
    return invalid('not a URL');
  }
  if (url.hostname === '') return invalid('no host');
  let target: RequestTarget;
  try {
    target = parseTarget(url.href);
  } catch {
    // Its user info's (the scheme and host were checked above).
    return invalid('malformed percent-encoding in its user info');
  }
  const { protocol, hostname, port, authorization } = target;
  return {
    protocol,
    hostname,
    port,
    servername: serverName(target, {}),
    authorization,
    key: `${protocol}//${authority(target)}`,
    // Built without the credentials, never from them: masked as redactUrl masks a base URL's.
    shown: `${protocol}//${authorization === undefined ? '' : '***@'}${authority(target)}`,
  };
}

/** NO_PROXY, parsed as Go parses it: what bypasses the proxy. */
interface Bypass {
  all: boolean;
  /** IP addresses and CIDR ranges, each with the port it is limited to ('' for any). */
  ips: { list: BlockList; port: string }[];
  /** Domain suffixes (`.example.com`); `exact` also matches the domain itself. */
  domains: { suffix: string; exact: boolean; port: string }[];
}

/**
 * NO_PROXY's comma-separated entries: `*` (everything); an IP address or CIDR range; a domain,
 * matching it and its subdomains (`.domain` or `*.domain`: its subdomains only); each but a CIDR
 * range with an optional `:port`. Entries that are none of these are ignored, as Go ignores them.
 */
function noProxy(value: string): Bypass {
  const net = process.getBuiltinModule('node:net');
  const bypass: Bypass = { all: false, ips: [], domains: [] };
  for (const raw of value.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (entry === '') continue;
    if (entry === '*') return { all: true, ips: [], domains: [] };
    const slash = entry.indexOf('/');
    if (slash !== -1) {
      const network = entry.slice(0, slash);
      const prefix = entry.slice(slash + 1);
      const family = net.isIP(network);
      if (family !== 0 && /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128)) {
        const list = new net.BlockList();
        list.addSubnet(network, Number(prefix), family === 4 ? 'ipv4' : 'ipv6');
        bypass.ips.push({ list, port: '' });
      }
      continue;
    }
    let [host, port] = splitHostPort(entry) ?? [entry, ''];
    if (host === '') continue;
    const family = net.isIP(host);
    if (family !== 0) {
      const list = new net.BlockList();
      list.addAddress(host, family === 4 ? 'ipv4' : 'ipv6');
      bypass.ips.push({ list, port });
      continue;
    }
    if (host.startsWith('*.')) host = host.slice(1);
    const exact = !host.startsWith('.');
    const suffix = process.getBuiltinModule('node:url').domainToASCII(exact ? `.${host}` : host);
    bypass.domains.push({ suffix: suffix === '' ? (exact ? `.${host}` : host) : suffix, exact, port });
  }
  return bypass;
}

/** `host:port` or `[v6]:port` split as Go's net.SplitHostPort splits it; undefined when it is not that form. */
function splitHostPort(entry: string): [string, string] | undefined {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    if (close === -1 || entry[close + 1] !== ':') return undefined;
    return [entry.slice(1, close), entry.slice(close + 2)];
  }
  const colon = entry.indexOf(':');
  if (colon === -1 || entry.indexOf(':', colon + 1) !== -1) return undefined;
  return [entry.slice(0, colon), entry.slice(colon + 1)];
}

/** Whether a request to `target` goes through the proxy: not to localhost or loopback, nor to what NO_PROXY names. */
function useProxy(target: RequestTarget, bypass: Bypass): boolean {
  const host = target.hostname.toLowerCase();
  if (isLoopbackHost(host)) return false;
  const family = process.getBuiltinModule('node:net').isIP(host);
  if (bypass.all) return false;
  const port = String(target.port);
  if (family !== 0) {
    const type = family === 4 ? 'ipv4' : 'ipv6';
    for (const ip of bypass.ips) {
      if (ip.list.check(host, type) && (ip.port === '' || ip.port === port)) return false;
    }
  }
  for (const domain of bypass.domains) {
    const matches = host.endsWith(domain.suffix) || (domain.exact && host === domain.suffix.slice(1));
    if (matches && (domain.port === '' || domain.port === port)) return false;
  }
  return true;
}

/** A proxy's error: it names the proxy (no credentials) and says what failed. */
function proxyError(proxy: ForwardProxy, what: string): Error {
  return Object.assign(new Error(`proxy ${proxy.shown}: ${what}`), { code: 'ERR_PROXY' });
}

/**
 * A TCP connection to `proxy` (TLS for an https:// proxy). An error before it is up names the
 * proxy: a refused connection is the proxy's, not the provider's.
 */
export function connectToProxy(proxy: ForwardProxy): Socket {
  let socket: Socket;
  let ready: string;
  if (proxy.protocol === 'https:') {
    const options: { host: string; port: number; servername?: string } = {
      host: proxy.hostname,
      port: proxy.port,
    };
    if (proxy.servername !== '') options.servername = proxy.servername;
    socket = process.getBuiltinModule('node:tls').connect(options) as TLSSocket;
    ready = 'secureConnect';
  } else {
    socket = process.getBuiltinModule('node:net').connect({ host: proxy.hostname, port: proxy.port });
    ready = 'connect';
  }
  let up = false;
  socket.once(ready, () => {
    up = true;
  });
  // First of the socket's listeners: the connection that reads its errors sees them so named.
  socket.on('error', (error: NodeJS.ErrnoException) => {
    if (up || error.code === 'ERR_PROXY') return;
    error.message = `cannot connect to proxy ${proxy.shown}: ${error.message}`;
    error.code = 'ERR_PROXY';
  });
  return socket;
}

/** `host:port` as CONNECT names a target. */
export function authority(target: RequestTarget): string {
  return `${target.hostname.includes(':') ? `[${target.hostname}]` : target.hostname}:${target.port}`;
}

const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?\r?\n/;

/**
 * A tunnel through `proxy` to `target` over `carrier`: it sends CONNECT, and once the proxy
 * answers 2xx it is a plain byte stream to the target (TLS runs over it). What is written before
 * is held until then. A proxy that refuses, closes, or answers with something that is not an
 * HTTP head of at most MAX_HEAD_BYTES destroys the tunnel with an error naming the proxy.
 */
export class Tunnel extends Duplex {
  #open = false;
  #head: Buffer | undefined;
  #held: { chunk: Buffer; callback: (error?: Error | null) => void }[] = [];

  constructor(
    readonly carrier: Socket,
    private readonly proxy: ForwardProxy,
    private readonly target: string,
  ) {
    super();
    carrier.on('data', (data: Buffer) => this.#onData(data));
    carrier.on('end', () => {
      if (this.#open) this.push(null);
      else this.#failWith('closed the connection before answering CONNECT');
    });
    carrier.on('close', () => {
      if (!this.#open) this.#failWith('closed the connection before answering CONNECT');
      else if (!this.destroyed) this.destroy();
    });
    carrier.on('error', (error: Error) => this.destroy(error));
    let request = `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n`;
    if (proxy.authorization !== undefined) request += `Proxy-Authorization: ${proxy.authorization}\r\n`;
    carrier.write(`${request}\r\n`, 'latin1');
  }

  #failWith(what: string): void {
    if (!this.destroyed) this.destroy(proxyError(this.proxy, what));
  }

  #onData(data: Buffer): void {
    if (this.#open) {
      if (!this.push(data)) this.carrier.pause();
      return;
    }
    const head = this.#head ? Buffer.concat([this.#head, data]) : data;
    const text = head.toString('latin1', 0, Math.min(head.length, MAX_HEAD_BYTES + 4));
    if (!'HTTP/'.startsWith(text.slice(0, 5))) {
      this.#failWith(`answered CONNECT ${this.target} with something that is not HTTP`);
      return;
    }
    const end = /\r?\n\r?\n/.exec(text);
    if (!end) {
      if (head.length > MAX_HEAD_BYTES)
        this.#failWith(`answered CONNECT ${this.target} with a head too large`);
      else this.#head = Buffer.from(head);
      return;
    }
    this.#head = undefined;
    const status = STATUS_LINE.exec(text);
    if (!status) {
      this.#failWith(`answered CONNECT ${this.target} with a malformed status line`);
      return;
    }
    const code = Number(status[1]);
    if (code < 200 || code > 299) {
      // The reason phrase as the proxy gave it, printable and short.
      const reason = (status[2] ?? '').replace(/[^\x20-\x7e]/g, '').slice(0, 100);
      this.#failWith(`refused CONNECT to ${this.target}: ${code}${reason === '' ? '' : ` ${reason}`}`);
      return;
    }
    this.#open = true;
    const rest = head.subarray(end.index + end[0].length);
    if (rest.length > 0) this.push(rest);
    for (const { chunk, callback } of this.#held.splice(0)) this.carrier.write(chunk, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.#open) this.carrier.write(chunk, callback);
    else this.#held.push({ chunk, callback });
  }

  override _read(): void {
    if (this.#open) this.carrier.resume();
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.carrier.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.carrier.destroy();
    for (const held of this.#held.splice(0)) held.callback(error ?? new Error('tunnel closed'));
    callback(error);
  }
}
