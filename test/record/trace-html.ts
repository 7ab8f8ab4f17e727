/** Reading the HTML trace's markup in tests: its bars, its embedded data, its inline script. */

export interface Bar {
  kind: string;
  attrs: Map<string, string>;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  '#39': "'",
  nbsp: '\u00a0',
};

export function unescapeHtml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|#39|nbsp);/g, (_, name: string) => ENTITIES[name] ?? '');
}

/** Opening tags, attribute values quoted (`>` may be left unescaped in them, `"` never is). */
const TAG = /<([a-z]+)((?:\s+[\w-]+(?:="[^"]*")?)*)\s*>/g;

function attributes(text: string): Map<string, string> {
  return new Map(
    [...text.matchAll(/([\w-]+)(?:="([^"]*)")?/g)].map((a) => [a[1] ?? '', unescapeHtml(a[2] ?? '')]),
  );
}

/** The attributes of every element with `data-kind`, in document order. */
export function bars(html: string): Bar[] {
  return [...html.matchAll(TAG)]
    .map((m) => attributes(m[2] ?? ''))
    .filter((attrs) => attrs.has('data-kind'))
    .map((attrs) => ({ kind: attrs.get('data-kind') ?? '', attrs }));
}

/** `path` → status of the agent bars; `path\ncallId` → status of the tool bars. */
export function barStatuses(html: string, kind: 'agent' | 'tool'): Map<string, string> {
  return new Map(
    bars(html)
      .filter((bar) => bar.kind === kind)
      .map((bar) => {
        const key =
          kind === 'agent'
            ? bar.attrs.get('data-path')
            : `${bar.attrs.get('data-path')}\n${bar.attrs.get('data-call-id')}`;
        return [key ?? '', bar.attrs.get('data-status') ?? ''];
      }),
  );
}

/** The text of the `<script>` element whose opening tag matches `open`. */
export function scriptText(html: string, open: RegExp): string {
  const start = html.search(open);
  if (start === -1) throw new Error(`no script ${open}`);
  const body = html.indexOf('>', start) + 1;
  return html.slice(body, html.indexOf('</script>', body));
}

/** The attributes of the first `name` element (with that `id`, if given). */
export function attributesOf(html: string, name: string, id?: string): Map<string, string> {
  for (const m of html.matchAll(TAG)) {
    const attrs = attributes(m[2] ?? '');
    if (m[1] === name && (id === undefined || attrs.get('id') === id)) return attrs;
  }
  throw new Error(`no <${name}${id ? ` id="${id}"` : ''}>`);
}

/** The classes of an agent's bar, or of one of its tool calls' bars. */
export function classesOf(html: string, path: string, callId?: string): string[] {
  const bar = bars(html).find(
    (b) =>
      b.attrs.get('data-path') === path &&
      (callId === undefined
        ? b.kind === 'agent'
        : b.kind === 'tool' && b.attrs.get('data-call-id') === callId),
  );
  return (bar?.attrs.get('class') ?? '').split(' ');
}
