const ESC = '\x1b';

/**
 * What a terminal shows after `output`, for the escapes the live tree uses: cursor up, erase line,
 * erase below, carriage return; colours and cursor visibility are ignored. A newline also returns
 * the carriage (as a terminal's output processing does). No line wraps.
 */
export function screen(output: string): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const tokens = output.split(new RegExp(`(${ESC}\\[\\??\\d*[A-Za-z]|\\r|\\n)`));
  for (const token of tokens) {
    if (token === '\n') {
      row++;
      col = 0;
      rows[row] ??= [];
    } else if (token === '\r') col = 0;
    else if (token.startsWith(`${ESC}[`)) {
      const command = token.at(-1);
      const count = Number(token.slice(2, -1)) || 1;
      const line = rows[row] ?? [];
      if (command === 'A') row = Math.max(0, row - count);
      else if (command === 'K') rows[row] = [];
      else if (command === 'J') {
        rows[row] = line.slice(0, col);
        rows.length = row + 1;
      }
    } else {
      const line = rows[row] ?? [];
      for (const char of Array.from(token)) line[col++] = char;
      rows[row] = line;
    }
  }
  const text = rows.map((line) => Array.from(line, (char) => char ?? ' ').join(''));
  while (text.at(-1) === '') text.pop();
  return text;
}
