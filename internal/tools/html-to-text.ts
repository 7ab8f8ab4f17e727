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

export function htmlToText(html: string): string {
  const withoutInvisible = html
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<(script|style|noscript|template|svg|head)\b[\s\S]*?<\/\1\s*>/gi, (match, tag: string) =>
      tag.toLowerCase() === 'head' ? titleOf(match) : ' ',
    );
  const withBreaks = withoutInvisible.replace(/<\/?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g, (_m, tag: string) =>
    BLOCK_TAGS.test(tag) ? '\n' : ' ',
  );
  return decodeEntities(withBreaks.replace(/<[^>]*>/g, ' '))
    .split('\n')
    .map((line) => line.replace(/[ \t\r\f\v\u00a0]+/g, ' ').trim())
    .filter((line) => line !== '')
    .join('\n');
}

function titleOf(head: string): string {
  const title = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(head);
  return title?.[1] ? `\n${title[1]}\n` : ' ';
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, body: string) => {
    if (body[0] === '#') {
      const code =
        body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : match;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? match;
  });
}
