import { readSync } from 'node:fs';

/**
 * Up to `size` bytes of `fd` from where it is: fewer when the file ends first. Into `scratch` when
 * it is large enough (its bytes are overwritten): memory a process has touched before costs no
 * page faults, which a fresh buffer's first write does (~1 ms for 250 KB on some VMs). A leaf
 * module (node:fs only): the executable reads the CLI bundle and its code cache with it before
 * anything else is loaded.
 */
export function readAll(fd: number, size: number, scratch?: Buffer): Buffer {
  const data = scratch !== undefined && scratch.length >= size ? scratch : Buffer.allocUnsafe(size);
  let read = 0;
  while (read < size) {
    const n = readSync(fd, data, read, size - read, null);
    if (n === 0) break;
    read += n;
  }
  return data.subarray(0, read);
}
