import { readSync } from 'node:fs';

/**
 * Up to `size` bytes of `fd` from where it is: fewer when the file ends first. A leaf module
 * (node:fs only): the executable reads the CLI bundle and its code cache with it before anything
 * else is loaded.
 */
export function readAll(fd: number, size: number): Buffer {
  const data = Buffer.allocUnsafe(size);
  let read = 0;
  while (read < size) {
    const n = readSync(fd, data, read, size - read, null);
    if (n === 0) break;
    read += n;
  }
  return data.subarray(0, read);
}
