import { addSecret } from '../secrets.js';
import { NOT_FIELD_CHAR, TOKEN } from './syntax.js';

/** Where a request goes, parsed once per URL per run. */
export interface RequestTarget {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /**
   * What the request line carries: the path and query, or, for a request sent to an HTTP proxy,
   * the absolute URL (`http://host:port/path`, RFC 9112 §3.2.2; see `viaProxy`).
   */
  path: string;
  /** `hostname:port`: the server whose connections `HttpPool.warm` opens. */
  server: string;
  /** The Host header Node sends for this target: the port only when it is not the protocol's default. */
  host: string;
  /** Sent as Proxy-Authorization (unless the headers give one): a request to an HTTP proxy that asks for it. */
  proxyAuthorization?: string;
  /**
   * Basic credentials of the URL's user info (`http://user:pass@host`), sent as Authorization
   * unless the headers give one, as Go's client sends them (an Ollama behind basic auth).
   */
  authorization?: string;
}

export function parseTarget(url: string): RequestTarget {
  const parsed = new URL(url);
  const { protocol } = parsed;
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new TypeError(`Protocol "${protocol}" not supported. Expected "http:" or "https:"`);
  }
  // `[::1]` is a host in a URL, `::1` one to connect to.
  const hostname = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const defaultPort = protocol === 'https:' ? 443 : 80;
  const port = parsed.port === '' ? defaultPort : Number(parsed.port);
  const bracketed = hostname.includes(':') ? `[${hostname}]` : hostname;
  const target: RequestTarget = {
    protocol,
    hostname,
    port,
    path: `${parsed.pathname}${parsed.search}`,
    server: `${hostname}:${port}`,
    host: port === defaultPort ? bracketed : `${bracketed}:${port}`,
  };
  const authorization = basicAuthorization(parsed);
  if (authorization !== undefined) target.authorization = authorization;
  return target;
}

/**
 * `Basic …` of a URL's user info (percent-decoded); undefined when it has none. Its password and
 * token become secrets: a server may quote a request back. A malformed escape throws (URIError).
 */
function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const password = decodeURIComponent(url.password);
  const token = Buffer.from(`${decodeURIComponent(url.username)}:${password}`, 'utf8').toString('base64');
  addSecret(password);
  addSecret(url.password);
  addSecret(token);
  return `Basic ${token}`;
}

/**
 * `target` as a request to an HTTP proxy names it: in absolute form, with the proxy's credentials
 * when it has them. Its connection goes to the proxy; `server` stays the origin's.
 */
export function viaProxy(target: RequestTarget, authorization: string | undefined): RequestTarget {
  const proxied: RequestTarget = { ...target, path: `${target.protocol}//${target.host}${target.path}` };
  if (authorization !== undefined) proxied.proxyAuthorization = authorization;
  return proxied;
}

function headerError(code: string, message: string): TypeError {
  return Object.assign(new TypeError(message), { code });
}

/** The head lines made for frozen headers, by target: a provider's calls share one header object. */
const frozenHeads = new WeakMap<object, Map<RequestTarget, HeadLines>>();

interface HeadLines {
  /** The request line and header lines, each ended by CRLF; not the empty line. */
  lines: string;
  /** Whether the headers give the body's framing (Content-Length or Transfer-Encoding). */
  framed: boolean;
}

/**
 * The head of a POST with `headers` and a body of `length` bytes, byte for byte what `node:http`
 * writes for `request(url, { method: 'POST', headers }).end(body)`: each header in the order first
 * given (a later name differing only in case replaces its value and spelling), then `Host` unless
 * given, `Connection: keep-alive` unless a Connection header was given, and `Content-Length`
 * unless the headers give it or Transfer-Encoding. Names must be tokens and values free of CR, LF
 * and NUL (Node's own errors and codes). Checked and built once for a frozen `headers` object.
 */
export function postHead(
  target: RequestTarget,
  headers: Readonly<Record<string, string | number>>,
  length: number,
): string {
  let head: HeadLines | undefined;
  if (Object.isFrozen(headers)) {
    let byTarget = frozenHeads.get(headers);
    if (!byTarget) {
      byTarget = new Map();
      frozenHeads.set(headers, byTarget);
    }
    head = byTarget.get(target);
    if (!head) {
      head = headLines(target, headers);
      byTarget.set(target, head);
    }
  } else head = headLines(target, headers);
  return head.framed ? `${head.lines}\r\n` : `${head.lines}Content-Length: ${length}\r\n\r\n`;
}

function headLines(target: RequestTarget, headers: Readonly<Record<string, string | number>>): HeadLines {
  const fields = new Map<string, [string, string]>();
  for (const [name, raw] of Object.entries(headers)) {
    if (!TOKEN.test(name)) {
      throw headerError('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`);
    }
    const value = String(raw);
    if (NOT_FIELD_CHAR.test(value)) {
      throw headerError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`);
    }
    fields.set(name.toLowerCase(), [name, value]);
  }
  if (!fields.has('host')) fields.set('host', ['Host', target.host]);
  if (target.authorization !== undefined && !fields.has('authorization')) {
    fields.set('authorization', ['Authorization', target.authorization]);
  }
  if (target.proxyAuthorization !== undefined && !fields.has('proxy-authorization')) {
    fields.set('proxy-authorization', ['Proxy-Authorization', target.proxyAuthorization]);
  }
  let head = `POST ${target.path} HTTP/1.1\r\n`;
  for (const [name, value] of fields.values()) head += `${name}: ${value}\r\n`;
  if (!fields.has('connection')) head += 'Connection: keep-alive\r\n';
  return { lines: head, framed: fields.has('content-length') || fields.has('transfer-encoding') };
}

/**
 * The TLS server name for a request, as Node's agent derives it: the Host header's name when one
 * is given, else the target's host; never an IP address.
 */
export function serverName(target: RequestTarget, headers: Record<string, string | number>): string {
  let name = target.hostname;
  for (const [field, value] of Object.entries(headers)) {
    if (field.toLowerCase() !== 'host') continue;
    const host = String(value);
    const close = host.indexOf(']');
    if (!host.startsWith('[')) name = host.split(':', 1)[0] ?? '';
    else name = close === -1 ? host : host.slice(1, close);
  }
  return process.getBuiltinModule('node:net').isIP(name) === 0 ? name : '';
}
