/** Readable text from an HTML document: scripts, styles and tags dropped, entities decoded. */

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  copy: '©',
  reg: '®',
  laquo: '«',
  raquo: '»',
  rsquo: '’',
  lsquo: '‘',
  rdquo: '”',
  ldquo: '“',
};

const BLOCK_TAGS =
  /^(p|div|br|li|ul|ol|tr|table|section|article|header|footer|nav|main|aside|h[1-6]|pre|blockquote|dt|dd|hr|title|form|figure|figcaption)$/i;

/**
 * Every step is a forward scan, linear in the input: the page is a stranger's (up to 2 MiB), and a
 * regex that rescans the rest of the text from each `<` (`<a<a<a…`, `<!--<!--…`) would block the
 * event loop, Ctrl-C and the run's deadline included, for an hour.
 */
export function htmlToText(html: string): string {
  const withBreaks = markTags(dropInvisible(dropComments(html)));
  return decodeEntities(dropLeftoverTags(withBreaks))
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/** `<!-- … -->` as a space; a comment never closed runs to the end, as in a browser. */
function dropComments(html: string): string {
  const parts: string[] = [];
  let pos = 0;
  for (let open = html.indexOf('<!--'); open !== -1; open = html.indexOf('<!--', pos)) {
    const close = html.indexOf('-->', open + 4);
    parts.push(html.slice(pos, open), ' ');
    pos = close === -1 ? html.length : close + 3;
  }
  parts.push(html.slice(pos));
  return parts.join('');
}

/**
 * Script, style, noscript, template and svg elements as a space, the head as its title. One never
 * closed runs to the end (a browser shows none of it either), except the head, whose end tag is
 * optional: an unclosed `<head` stays for the later steps.
 */
function dropInvisible(html: string): string {
  const opener = /<(script|style|noscript|template|svg|head)\b/gi;
  let headUnclosed = false; // then no later `<head` closes either: searching again would be quadratic
  const parts: string[] = [];
  let pos = 0;
  for (let open = opener.exec(html); open !== null; open = opener.exec(html)) {
    const tag = (open[1] ?? '').toLowerCase();
    const end = tag === 'head' && headUnclosed ? -1 : endOfCloser(html, tag, opener.lastIndex);
    if (end === -1) {
      if (tag === 'head') {
        headUnclosed = true;
        continue;
      }
      parts.push(html.slice(pos, open.index), ' ');
      pos = html.length;
      break;
    }
    parts.push(html.slice(pos, open.index), tag === 'head' ? titleOf(html.slice(open.index, end)) : ' ');
    pos = end;
    opener.lastIndex = end;
  }
  parts.push(html.slice(pos));
  return parts.join('');
}

/** Where the first `</tag>` (any case, blanks before the `>`) at or after `from` ends, or -1. */
function endOfCloser(html: string, tag: string, from: number): number {
  const closer = new RegExp(`</${tag}\\s*>`, 'gi');
  closer.lastIndex = from;
  return closer.exec(html) === null ? -1 : closer.lastIndex;
}

function titleOf(head: string): string {
  const opener = /<title\b/gi;
  if (opener.exec(head) === null) return ' ';
  const start = head.indexOf('>', opener.lastIndex) + 1;
  if (start === 0) return ' ';
  const closer = /<\/title\s*>/gi;
  closer.lastIndex = start;
  const close = closer.exec(head);
  return close !== null && close.index > start ? `\n${head.slice(start, close.index)}\n` : ' ';
}

const TAG_START = /<\/?([a-zA-Z][a-zA-Z0-9]*)\b/y;

/** Each tag `<name …>` or `</name …>` as a line break (block tags) or a space. */
function markTags(html: string): string {
  const parts: string[] = [];
  let pos = 0;
  for (let lt = html.indexOf('<'); lt !== -1; ) {
    TAG_START.lastIndex = lt;
    const tag = TAG_START.exec(html);
    if (tag === null) {
      lt = html.indexOf('<', lt + 1);
      continue;
    }
    const gt = html.indexOf('>', TAG_START.lastIndex);
    if (gt === -1) break; // no tag closes after this one either
    parts.push(html.slice(pos, lt), BLOCK_TAGS.test(tag[1] ?? '') ? '\n' : ' ');
    pos = gt + 1;
    lt = html.indexOf('<', pos);
  }
  parts.push(html.slice(pos));
  return parts.join('');
}

/** What is left between `<` and the next `>` as a space; a `<` with no `>` after it is text. */
function dropLeftoverTags(text: string): string {
  const parts: string[] = [];
  let pos = 0;
  for (let lt = text.indexOf('<'); lt !== -1; lt = text.indexOf('<', pos)) {
    const gt = text.indexOf('>', lt + 1);
    if (gt === -1) break;
    parts.push(text.slice(pos, lt), ' ');
    pos = gt + 1;
  }
  parts.push(text.slice(pos));
  return parts.join('');
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff) return match;
      // A lone surrogate would make the text unsendable (providers refuse it): a browser shows U+FFFD.
      return code >= 0xd800 && code <= 0xdfff ? '\ufffd' : String.fromCodePoint(code);
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? match;
  });
}
