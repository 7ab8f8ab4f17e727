/**
 * smol-toml keeps no positions, so after a successful parse the source text is scanned line by
 * line for table headers and `key =` lines: field path → line and column of its key. Only for
 * valid TOML; a path seen twice (which valid TOML cannot have, so the scan misread something) is
 * dropped rather than guessed. Keys inside inline tables and array items fall back to their parent.
 */
export type TomlPositions = Map<string, { line: number; column: number } | null>;

const KEY_PART = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')`;
const DOTTED_KEY = String.raw`${KEY_PART}(?:[ \t]*\.[ \t]*${KEY_PART})*`;
const HEADER = new RegExp(String.raw`^([ \t]*)(\[\[?)[ \t]*(${DOTTED_KEY})[ \t]*\]\]?`);
const KEY_VALUE = new RegExp(String.raw`^([ \t]*)(${DOTTED_KEY})[ \t]*=[ \t]*(.*)$`);

export function tomlPositions(text: string): TomlPositions {
  const positions: TomlPositions = new Map();
  const record = (path: (string | number)[], line: number, column: number): void => {
    const key = JSON.stringify(path);
    positions.set(key, positions.has(key) ? null : { line, column });
  };
  const arrayCounts = new Map<string, number>();
  let table: (string | number)[] = [];
  let openString: '"""' | "'''" | undefined;
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (openString) {
      if (closesMultiline(line, openString)) openString = undefined;
      continue;
    }
    const header = HEADER.exec(line);
    if (header) {
      const isArray = header[2] === '[[';
      table = resolveTablePath(splitDottedKey(header[3] ?? ''), arrayCounts, isArray);
      record(table, index + 1, (header[1] ?? '').length + 1);
      continue;
    }
    const pair = KEY_VALUE.exec(line);
    if (!pair) continue;
    const keys = splitDottedKey(pair[2] ?? '');
    for (let length = 1; length <= keys.length; length++) {
      const path = [...table, ...keys.slice(0, length)];
      if (length === keys.length || !positions.has(JSON.stringify(path)))
        record(path, index + 1, (pair[1] ?? '').length + 1);
    }
    openString = opensMultiline(pair[3] ?? '');
  }
  return positions;
}

/** The position of the longest prefix of `segments` that the scan found. */
export function locateInToml(
  positions: TomlPositions,
  segments: (string | number)[],
): { line: number; column: number } | undefined {
  for (let length = segments.length; length > 0; length--) {
    const found = positions.get(JSON.stringify(segments.slice(0, length)));
    if (found) return found;
    if (found === null) return undefined;
  }
  return undefined;
}

function splitDottedKey(text: string): string[] {
  const parts = text.match(new RegExp(KEY_PART, 'g')) ?? [];
  return parts.map((part) =>
    part.startsWith('"') ? unquote(part) : part.startsWith("'") ? part.slice(1, -1) : part,
  );
}

/** A basic-string key; TOML escapes JSON lacks (`\U0001F600`, `\e`) leave it as written, so it is never found. */
function unquote(key: string): string {
  try {
    return JSON.parse(key) as string;
  } catch {
    return key;
  }
}

/** `[a.b]` under `[[a]]` means the last element of `a`: array-of-tables prefixes get their index. */
function resolveTablePath(
  keys: string[],
  arrayCounts: Map<string, number>,
  isArray: boolean,
): (string | number)[] {
  const path: (string | number)[] = [];
  for (const [position, key] of keys.entries()) {
    path.push(key);
    const id = JSON.stringify(path);
    if (isArray && position === keys.length - 1) {
      const count = (arrayCounts.get(id) ?? 0) + 1;
      arrayCounts.set(id, count);
      path.push(count - 1);
    } else {
      const count = arrayCounts.get(id);
      if (count !== undefined) path.push(count - 1);
    }
  }
  return path;
}

/** The delimiter of a multi-line string that starts in this value and does not end on its line. */
function opensMultiline(value: string): '"""' | "'''" | undefined {
  const delimiter = value.startsWith('"""') ? '"""' : value.startsWith("'''") ? "'''" : undefined;
  if (!delimiter) return undefined;
  return closesMultiline(value.slice(3), delimiter) ? undefined : delimiter;
}

function closesMultiline(text: string, delimiter: '"""' | "'''"): boolean {
  if (delimiter === "'''") return text.includes("'''");
  // A `"""` preceded by an odd number of backslashes is escaped.
  for (let at = text.indexOf('"""'); at !== -1; at = text.indexOf('"""', at + 1)) {
    let backslashes = 0;
    while (text[at - 1 - backslashes] === '\\') backslashes++;
    if (backslashes % 2 === 0) return true;
  }
  return false;
}
