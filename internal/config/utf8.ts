import { FileProblem } from './file-problem.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Decodes a config file as strict UTF-8 (a leading BOM is dropped); invalid bytes are a ConfigError. */
export function decodeUtf8Strict(bytes: Uint8Array, file: string): string {
  try {
    return decoder.decode(bytes);
  } catch {
    const offset = firstInvalidOffset(bytes);
    // lastIndexOf from -1 would search from the end.
    const lineStart = offset === 0 ? 0 : bytes.lastIndexOf(0x0a, offset - 1) + 1;
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

/**
 * Where the first sequence that is not UTF-8 starts, scanning character by character (a prefix
 * that cuts a valid character also fails to decode, so no bisection of prefixes can find it).
 */
function firstInvalidOffset(bytes: Uint8Array): number {
  let at = 0;
  while (at < bytes.length) {
    const lead = bytes[at] as number;
    if (lead < 0x80) {
      at++;
      continue;
    }
    const length =
      lead >= 0xc2 && lead <= 0xdf
        ? 2
        : lead >= 0xe0 && lead <= 0xef
          ? 3
          : lead >= 0xf0 && lead <= 0xf4
            ? 4
            : 0;
    if (length === 0 || at + length > bytes.length) return at;
    try {
      decoder.decode(bytes.subarray(at, at + length));
    } catch {
      return at;
    }
    at += length;
  }
  return at;
}
