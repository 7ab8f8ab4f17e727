/** FNV-1a (32 bits) of every `stride`-th value, its offset basis mixed with `seed`: a cheap checksum. */
export function fnv1a(values: ArrayLike<number>, stride = 1, seed = 0): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < values.length; i += stride) hash = Math.imul(hash ^ (values[i] ?? 0), 0x01000193) >>> 0;
  return hash;
}

/** A short name for `text` (a file name's part): FNV-1a of its UTF-8 bytes, 8 hex digits. */
export function hashName(text: string): string {
  return fnv1a(Buffer.from(text)).toString(16).padStart(8, '0');
}
