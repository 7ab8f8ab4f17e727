/** Text on one line, runs of white space folded: for messages built from text axe did not write. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
