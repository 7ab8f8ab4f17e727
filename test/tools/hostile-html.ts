/** `unit` repeated to `size` characters (url_fetch reads at most 2 MiB of a page). */
export function repeated(unit: string, size: number): string {
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

/**
 * Pages built to make a rescanning regex quadratic: each opener has no closer after it. Each
 * comes with the text htmlToText makes of it: what is hidden to the end, or the page itself
 * where a `<` with no `>` after it stays text. Shared by the test and `npm run bench`.
 */
export const HOSTILE: Record<string, { page: (size: number) => string; text: (page: string) => string }> = {
  'unclosed comments': { page: (size) => repeated('<!--', size), text: () => '' },
  'lone <': { page: (size) => repeated('<', size), text: (page) => page },
  'tags with no >': { page: (size) => repeated('<a', size), text: (page) => page },
  'unclosed svg': { page: (size) => repeated('<svg', size), text: () => '' },
  'unclosed script': { page: (size) => repeated('<script', size), text: () => '' },
  'unclosed style': { page: (size) => repeated('<style', size), text: () => '' },
  'unclosed head': { page: (size) => repeated('<head', size), text: (page) => page },
  'titles with no >': { page: (size) => `<head>${repeated('<title', size)}</head>`, text: () => '' },
  'unclosed titles': { page: (size) => `<head>${repeated('<title>', size)}</head>`, text: () => '' },
  'a mix': {
    page: (size) => `${repeated('<head<a x="<title<&#1234</p<', size / 2)}${repeated('<svg<!--<', size / 2)}`,
    // Text up to the first `<svg`, which hides the rest (the blank before it trimmed).
    text: (page) => page.slice(0, page.indexOf('<svg')).trimEnd(),
  },
};
