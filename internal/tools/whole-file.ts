import type { FileHandle } from 'node:fs/promises';

/** Files larger than this are not loaded whole: read_file pages below it, edit_file edits below it. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * The bytes of a file a tool opened (see `openInSandbox`), `directory` said when it is one. A file
 * larger than MAX_FILE_BYTES is refused, and no more than that is read whatever size it claimed
 * (a file that grows as it is read).
 */
export async function readWholeFile(handle: FileHandle, shown: string, directory: string): Promise<Buffer> {
  const info = await handle.stat();
  if (info.isDirectory()) throw new Error(directory);
  const tooLarge = (size: number) =>
    new Error(`path "${shown}" is ${size} bytes, larger than the ${MAX_FILE_BYTES}-byte limit`);
  if (info.size > MAX_FILE_BYTES) throw tooLarge(info.size);
  const chunks: Buffer[] = [];
  let total = 0;
  // One read when the file is the size it said: a byte more is asked to see that it ends there.
  for (let room = info.size + 1; ; room = 64 * 1024) {
    const { bytesRead, buffer } = await handle.read(Buffer.allocUnsafe(room), 0, room, null);
    if (bytesRead === 0) break;
    total += bytesRead;
    if (total > MAX_FILE_BYTES) throw tooLarge(total);
    chunks.push(buffer.subarray(0, bytesRead));
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}
