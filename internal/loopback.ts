import type { BlockList } from 'node:net';

let loopback: BlockList | undefined;

/**
 * Whether `address` (an IP literal, brackets allowed) is a loopback address: 127.0.0.0/8, ::1, or
 * IPv4's loopback mapped into IPv6. Anything that is not an IP literal is not.
 */
export function isLoopbackAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '');
  // node:net read when first needed, as the HTTP client reads it: not at every start of the CLI.
  const net = process.getBuiltinModule('node:net');
  const family = net.isIP(bare);
  if (family === 0) return false;
  if (!loopback) {
    loopback = new net.BlockList();
    loopback.addSubnet('127.0.0.0', 8, 'ipv4');
    loopback.addAddress('::1', 'ipv6');
    loopback.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
  }
  return loopback.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/** Whether a URL's host names this machine: `localhost` or a loopback address. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || isLoopbackAddress(host);
}
