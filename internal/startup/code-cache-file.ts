import { readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Script } from 'node:vm';
import { readOwnFileSync, writeOwnFileSync } from '../fs/own-file.js';
import { removeFile, removeStaleFiles } from '../fs/remove-stale.js';
import { fnv1a } from '../hash.js';

/**
 * A code cache file: a header, then what V8's `createCachedData` made. V8 checks a cache's version,
 * flags and source length, but in a release build not its content, and not the source itself:
 * the header says which cli.js it was made from (size, mtime, inode) and carries a checksum.
 */
const MAGIC = 0x33435841; // "AXC3"
// magic, checksum, heap bytecode when made, made at (Unix s); source size, mtime ms, inode.
const HEADER = 40;

/** Which file a cache belongs to: a rebuild or an edit of cli.js changes it. */
export interface SourceIdentity {
  size: number;
  mtimeMs: number;
  ino: number;
}

export interface CacheFile {
  payload: Buffer;
  /** The heap's bytecode when the cache was made. */
  bytecode: number;
  /** Epoch ms. */
  madeAt: number;
}

/**
 * The cache at `file` when it is usable for `source`: owned by this user and writable by nobody
 * else (a code cache is code), with the right magic number, source and checksum.
 */
export function readCacheFile(file: string, source: SourceIdentity, scratch?: Buffer): CacheFile | undefined {
  let data: Buffer;
  try {
    data = readOwnFileSync(file, { scratch });
  } catch {
    return undefined;
  }
  if (data.length < HEADER || data.readUInt32LE(0) !== MAGIC) return undefined;
  if (
    data.readDoubleLE(16) !== source.size ||
    data.readDoubleLE(24) !== source.mtimeMs ||
    data.readDoubleLE(32) !== source.ino
  ) {
    return undefined;
  }
  const payload = data.subarray(HEADER);
  if (data.readUInt32LE(4) !== checksum(payload)) return undefined;
  return { payload, bytecode: data.readUInt32LE(8), madeAt: data.readUInt32LE(12) * 1000 };
}

/**
 * The checksum: FNV-1a over the length and every 128th 32-bit word (one in 512 bytes): hashing all
 * of it in JavaScript costs ~6 ms, and Node's only crc32 (zlib.crc32, Node 22.2+) loads zlib
 * (~4 ms). A damaged disk block (512 bytes) spans a sampled word; damage it misses, V8 may crash
 * on — the crash marker (code-cache.ts) then removes the cache. Few enough words (~1000 for a
 * run's cache) that V8 never optimises the loop: at one in 128 bytes it did (TurboFan, on-stack),
 * paging in ~4 MB of its compiler and spending ~5 ms on a thread, in every run.
 */
function checksum(payload: Uint8Array): number {
  const words = new Uint32Array(payload.buffer, payload.byteOffset, payload.length >>> 2);
  return fnv1a(words, 128, payload.length);
}

/** `<cache>.quiet-<n>`: the nth run in a row that found nothing to add to the cache (code-cache.ts). */
export const QUIET_MARK = '.quiet-';

/**
 * Writes the cache of `script` for `source` (owner-only), then removes leftovers: the quiet-run
 * marks of the cache it replaced, other builds', Node versions' and flags' caches (and marks) not
 * rewritten for a week, and temp files of killed writes. Never throws: the cache is only an
 * optimisation.
 */
export function saveCacheFile(
  file: string,
  script: Script,
  source: SourceIdentity,
  bytecode: number,
  ownPrefix: string,
): void {
  try {
    const dir = dirname(file);
    const payload = script.createCachedData();
    const header = Buffer.alloc(HEADER);
    header.writeUInt32LE(MAGIC, 0);
    header.writeUInt32LE(checksum(payload), 4);
    header.writeUInt32LE(bytecode, 8);
    header.writeUInt32LE(Math.floor(Date.now() / 1000), 12);
    header.writeDoubleLE(source.size, 16);
    header.writeDoubleLE(source.mtimeMs, 24);
    header.writeDoubleLE(source.ino, 32);
    writeOwnFileSync(file, Buffer.concat([header, payload]));
    const ownMarks = `${basename(file)}${QUIET_MARK}`;
    const names = readdirSync(dir);
    for (const name of names) if (name.startsWith(ownMarks)) removeFile(join(dir, name));
    const foreign = (name: string) =>
      (name.endsWith('.bin') || name.includes(`.bin${QUIET_MARK}`)) && !name.startsWith(ownPrefix);
    removeStaleFiles(
      dir,
      names.filter((name) => foreign(name) || name.endsWith('.tmp')),
    );
  } catch {
    // The next run compiles as usual and tries again.
  }
}
