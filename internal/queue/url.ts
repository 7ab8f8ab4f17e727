import { ConfigError } from '../errors.js';

/** Where a batch's queue lives: a PostgreSQL connection URL, and how it may be shown. */
export interface QueueUrl {
  /** As given: handed to the driver only, never printed. */
  url: string;
  /** `postgres://user:***@host:5432/db`: the only form that appears in anything axe writes. */
  masked: string;
  /** `host:port`, for "cannot reach" messages. */
  host: string;
}

/** The query parameters of a connection URL whose values are secrets. */
const SECRET_PARAMS = new Set(['password', 'sslpassword', 'sslkey']);

/**
 * `--queue URL` or `AXE_QUEUE`: a `postgres://` or `postgresql://` URL with a host. `source` names
 * where it came from, for the error (exit 2) that refuses anything else.
 */
export function parseQueueUrl(text: string, source: '--queue' | 'AXE_QUEUE'): QueueUrl {
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(
      `${source}: expected a PostgreSQL URL (postgres://user@host:5432/db), got "${shape(text)}"`,
    );
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new ConfigError(
      `${source}: expected a postgres:// or postgresql:// URL, got a ${parsed.protocol.replace(/:$/, '')}:// one`,
    );
  }
  if (parsed.hostname === '') {
    throw new ConfigError(`${source}: the URL names no host (postgres://user@host:5432/db)`);
  }
  return { url: text, masked: maskUrl(parsed), host: `${parsed.hostname}:${parsed.port || '5432'}` };
}

/** The queue URL from `--queue` (when given) or `AXE_QUEUE`; undefined when neither is set. */
export function queueUrlFrom(flag: string | undefined, env: NodeJS.ProcessEnv): QueueUrl | undefined {
  if (flag !== undefined) return parseQueueUrl(flag, '--queue');
  const fromEnv = env.AXE_QUEUE;
  return fromEnv !== undefined && fromEnv !== '' ? parseQueueUrl(fromEnv, 'AXE_QUEUE') : undefined;
}

/** A URL with its password, and any secret query parameter, replaced by `***`. */
function maskUrl(url: URL): string {
  const copy = new URL(url.href);
  if (copy.password !== '') copy.password = '***';
  for (const name of [...copy.searchParams.keys()]) {
    if (SECRET_PARAMS.has(name.toLowerCase())) copy.searchParams.set(name, '***');
  }
  return copy.href.replace('%2A%2A%2A', '***');
}

/** What an unparseable URL looked like, without what could be a password: its scheme and host part. */
function shape(text: string): string {
  const at = text.lastIndexOf('@');
  return at === -1 ? text.slice(0, 80) : `…@${text.slice(at + 1, at + 81)}`;
}
