import { constants } from 'node:fs';
import { fsPromises } from './promises.js';
import { describeFileType, formatBytes, UnreadableFileError } from './read-bounded.js';

/** How much of the file one read takes. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Each line of a regular file, in order, read a chunk at a time: the file may be of any size, as
 * long as none of its lines is over `maxLineBytes` (UnreadableFileError past them). A last line
 * without its newline is given too. Opened non-blocking and refused unless a regular file (a FIFO
 * never blocks); errors of the file system are thrown as they are.
 */
export async function readLines(
  path: string,
  maxLineBytes: number,
  onLine: (line: string, number: number) => void,
): Promise<void> {
  const handle = await fsPromises().open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new UnreadableFileError(path, 'not-regular', `is ${describeFileType(stats)}, not a regular file`);
    }
    /** The start of the line being read, from earlier chunks. */
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let number = 0;
    const tooLong = () =>
      new UnreadableFileError(path, 'too-large', `has a line larger than ${formatBytes(maxLineBytes)}`);
    for (;;) {
      const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(CHUNK_BYTES), 0, CHUNK_BYTES, null);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      let start = 0;
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, start)) {
        const part = chunk.subarray(start, end);
        if (pendingBytes + part.length > maxLineBytes) throw tooLong();
        const line =
          pendingBytes === 0 ? part : Buffer.concat([...pending, part], pendingBytes + part.length);
        pending = [];
        pendingBytes = 0;
        onLine(line.toString('utf8'), ++number);
        start = end + 1;
      }
      const rest = chunk.subarray(start);
      pendingBytes += rest.length;
      if (pendingBytes > maxLineBytes) throw tooLong();
      if (rest.length > 0) pending.push(rest);
    }
    if (pendingBytes > 0) onLine(Buffer.concat(pending, pendingBytes).toString('utf8'), ++number);
  } finally {
    await handle.close();
  }
}
