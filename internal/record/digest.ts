import { readRegularFileSync } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';

/**
 * A fingerprint of an agent file's bytes, to tell on `--resume` whether it changed: its size and
 * two multiplicative hashes (FNV-1a and one with another prime, 64 bits in all). Not a
 * cryptographic hash, and need not be: it guards against edits, not forgery — and every run
 * computes it, so it must not load node:crypto. Read in one go: the file was just read to start
 * the run, and a read through the thread pool kept the record waiting at the run's end.
 */
export function fileDigest(file: string): string {
  const bytes = readRegularFileSync(file, READ_LIMITS.agentFile);
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (const byte of bytes) {
    a = Math.imul(a ^ byte, 0x01000193) >>> 0;
    b = Math.imul(b ^ byte, 0x5bd1e995) >>> 0;
  }
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  return `${bytes.length}:${hex(a)}${hex(b)}`;
}
