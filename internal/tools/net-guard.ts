import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { forbiddenReason, isLoopback } from './ip-ranges.js';

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

/** Resolves the URL's host ONCE and checks every address; returns the one to connect to. */
export async function checkUrl(url: URL, policy: HostPolicy): Promise<CheckedTarget> {
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
  const addresses = literal ? [{ address: host, family: literal as 4 | 6 }] : await resolveAll(host);
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
  if (policy.allowLoopback && isLoopback(address)) return undefined;
  return forbiddenReason(address);
}

async function resolveAll(host: string): Promise<{ address: string; family: 4 | 6 }[]> {
  try {
    const found = await lookup(host, { all: true, verbatim: true });
    return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'lookup failed';
    throw new NetGuardError(`cannot resolve host "${host}": ${code}`);
  }
}
