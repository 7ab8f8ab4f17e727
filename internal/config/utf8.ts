import { FileProblem } from './file-problem.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Decodes a config file as strict UTF-8 (a leading BOM is dropped); invalid bytes are a ConfigError. */
export function decodeUtf8Strict(bytes: Uint8Array, file: string): string {
  try {
    return decoder.decode(bytes);
  } catch {
    const offset = firstInvalidOffset(bytes);
    const lineStart = bytes.lastIndexOf(0x0a, offset - 1) + 1;
    const line = bytes.subarray(0, lineStart).filter((byte) => byte === 0x0a).length + 1;
    const column = [...decoder.decode(bytes.subarray(lineStart, offset))].length + 1;
    const byte = (bytes[offset] ?? 0).toString(16).padStart(2, '0');
    throw new FileProblem(
      file,
      `not valid UTF-8 (first bad byte 0x${byte} at offset ${offset}): save the file as UTF-8`,
      { line, column },
    );
  }
}

function firstInvalidOffset(bytes: Uint8Array): number {
  let low = 0;
  let high = bytes.length;
  // The longest valid prefix, by bisection: decoding a prefix that cuts a character in half
  // also fails, so the answer is within 3 bytes of the found boundary.
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    try {
      decoder.decode(bytes.subarray(0, mid));
      low = mid;
    } catch {
      high = mid - 1;
    }
  }
  return low;
}
