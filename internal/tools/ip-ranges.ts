import { isIPv4, isIPv6 } from 'node:net';

/**
 * Pure classification of IP addresses `url_fetch` must never reach. Inputs are the canonical
 * spellings the WHATWG URL parser and DNS produce (`127.0.0.1`, `::ffff:7f00:1`); the URL parser
 * already turns decimal / hex / octal IPv4 spellings into dotted quads.
 */

type V4Range = [base: number, prefix: number, label: string];

const V4_FORBIDDEN: V4Range[] = [
  [ipv4('0.0.0.0'), 8, 'this-network'],
  [ipv4('10.0.0.0'), 8, 'private'],
  [ipv4('100.64.0.0'), 10, 'carrier-grade NAT'],
  [ipv4('127.0.0.0'), 8, 'loopback'],
  [ipv4('169.254.0.0'), 16, 'link-local'],
  [ipv4('172.16.0.0'), 12, 'private'],
  [ipv4('192.0.0.0'), 24, 'reserved'],
  [ipv4('192.0.2.0'), 24, 'documentation'],
  [ipv4('192.88.99.0'), 24, 'reserved'],
  [ipv4('192.168.0.0'), 16, 'private'],
  [ipv4('198.18.0.0'), 15, 'benchmarking'],
  [ipv4('198.51.100.0'), 24, 'documentation'],
  [ipv4('203.0.113.0'), 24, 'documentation'],
  [ipv4('224.0.0.0'), 4, 'multicast'],
  [ipv4('240.0.0.0'), 4, 'reserved'],
];

/** The IPv4 address as an unsigned 32-bit number; the input must be a dotted quad. */
function ipv4(address: string): number {
  return address.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function inV4Range(value: number, [base, prefix]: V4Range): boolean {
  const size = 2 ** (32 - prefix);
  return value >= base && value < base + size;
}

/** The eight 16-bit groups of an IPv6 address (embedded dotted IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase().replace(/^\[|\]$/g, '');
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = ipv4(dotted[1]);
    text = `${text.slice(0, dotted.index)}${Math.floor(v4 / 65536).toString(16)}:${(v4 % 65536).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - headGroups.length - tailGroups.length;
  return [...headGroups, ...Array<string>(fill).fill('0'), ...tailGroups].map((g) => Number.parseInt(g, 16));
}

/** Why the address is forbidden (`loopback`, `private`, …), or undefined when it is public. */
export function forbiddenReason(address: string): string | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) {
    const value = ipv4(bare);
    return V4_FORBIDDEN.find((range) => inV4Range(value, range))?.[2];
  }
  if (!isIPv6(bare)) return 'not an IP address';
  const g = ipv6Groups(bare);
  const embeddedV4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 7) && g[7] === 0) return 'unspecified';
  if (zeros(0, 7) && g[7] === 1) return 'loopback';
  // IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible (::a.b.c.d): judged by the IPv4 inside.
  if (zeros(0, 5) && (g[5] === 0xffff || g[5] === 0)) {
    return forbiddenReason(embeddedV4(g[6]!, g[7]!)) ?? (g[5] === 0 ? 'IPv4-compatible' : undefined);
  }
  // NAT64 (64:ff9b::/96) and 6to4 (2002::/16) carry an IPv4 address that would be reached.
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return forbiddenReason(embeddedV4(g[6]!, g[7]!));
  if (g[0] === 0x2002) return forbiddenReason(embeddedV4(g[1]!, g[2]!));
  const first = g[0]!;
  if (first === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'NAT64 local-use';
  if (first === 0x100 && zeros(1, 4)) return 'discard-only';
  if (first === 0x2001 && g[1]! < 0x200) return 'IETF protocol assignment';
  if (first === 0x2001 && g[1] === 0xdb8) return 'documentation';
  if ((first & 0xfe00) === 0xfc00) return 'unique local';
  if ((first & 0xffc0) === 0xfe80) return 'link-local';
  if ((first & 0xffc0) === 0xfec0) return 'site-local';
  if ((first & 0xff00) === 0xff00) return 'multicast';
  return undefined;
}
