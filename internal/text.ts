/** Text on one line, runs of white space folded: for messages built from text axe did not write. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The first `maxBytes` bytes of UTF-8 `bytes` as text, cut back to a character boundary. */
export function utf8Prefix(bytes: Uint8Array, maxBytes: number): string {
  let end = Math.min(maxBytes, bytes.length);
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return Buffer.from(bytes.buffer, bytes.byteOffset, end).toString('utf8');
}

/**
 * The first `max` UTF-16 units of `text`, one fewer when the cut would split a surrogate pair (an
 * emoji): a lone surrogate makes a request unsendable (Anthropic: 400 "no low surrogate").
 */
export function wholeCharsPrefix(text: string, max: number): string {
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
