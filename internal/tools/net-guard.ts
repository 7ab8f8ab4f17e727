import dnsPromises from 'node:dns/promises';
import { isIP } from 'node:net';
import { untilAborted } from '../abort.js';
import { isLoopbackAddress } from '../loopback.js';
import { forbiddenReason } from './ip-ranges.js';

export interface HostPolicy {
  /** Exact host names allowed; empty = any public host. */
  allowedHosts: string[];
  /** `AXE_ALLOW_PRIVATE_HOSTS=1`: loopback addresses become reachable (tests). */
  allowLoopback: boolean;
}

/** The address to connect to for a URL, checked once (no second DNS lookup can change it). */
export interface CheckedTarget {
  url: URL;
  address: string;
  family: 4 | 6;
}

export class NetGuardError extends Error {}

/**
 * Resolves the URL's host ONCE and checks every address; returns the one to connect to. When
 * `signal` aborts during the lookup, rejects at once with its reason.
 */
export async function checkUrl(url: URL, policy: HostPolicy, signal: AbortSignal): Promise<CheckedTarget> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetGuardError(
      `unsupported scheme "${url.protocol.replace(':', '')}": only http and https are allowed`,
    );
  }
  if (url.username || url.password) throw new NetGuardError('URLs with credentials are not allowed');
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.allowedHosts.length > 0 && !policy.allowedHosts.some((h) => h.toLowerCase() === host)) {
    throw new NetGuardError(`host "${host}" is not in allowed_hosts`);
  }
  const literal = isIP(host);
  const addresses = literal ? [{ address: host, family: literal as 4 | 6 }] : await resolveAll(host, signal);
  if (addresses.length === 0) throw new NetGuardError(`host "${host}" resolved to no addresses`);
  for (const { address } of addresses) {
    const reason = addressRefusal(address, policy);
    if (reason) {
      const what = literal ? `address ${address}` : `host "${host}" resolves to ${address}, which`;
      throw new NetGuardError(`${what} is a ${reason} address: refused`);
    }
  }
  const first = addresses[0]!;
  return { url, address: first.address, family: first.family };
}

/** Why a connection to this address is refused under the policy, or undefined when allowed. */
export function addressRefusal(
  address: string,
  policy: Pick<HostPolicy, 'allowLoopback'>,
): string | undefined {
  if (policy.allowLoopback && isLoopbackAddress(address)) return undefined;
  return forbiddenReason(address);
}

/**
 * The host's addresses by `dns.lookup` (getaddrinfo), as the system resolves names: /etc/hosts and
 * nsswitch included, which c-ares' `Resolver` would skip. getaddrinfo cannot be cancelled, and a
 * resolver that never answers holds it for its timeout × attempts × nameservers (10 s and more),
 * so the lookup races `signal`: the deadline, Ctrl-C and url_fetch's own limit end the wait at
 * once, and the abandoned lookup finishes on its thread, its answer dropped. (That thread is one
 * of libuv's 4, and the process cannot exit before it returns: libuv joins its threads at exit.)
 */
async function resolveAll(host: string, signal: AbortSignal): Promise<{ address: string; family: 4 | 6 }[]> {
  signal.throwIfAborted();
  // `dnsPromises.lookup` read at call time, not a named import: tests replace it with a slow one.
  const lookup = dnsPromises.lookup(host, { all: true, verbatim: true }).then(
    (found) =>
      found.map((a) => ({ address: a.address, family: a.family === 6 ? (6 as const) : (4 as const) })),
    (error: NodeJS.ErrnoException) => {
      throw new NetGuardError(`cannot resolve host "${host}": ${error.code ?? 'lookup failed'}`);
    },
  );
  return untilAborted(lookup, signal);
}
