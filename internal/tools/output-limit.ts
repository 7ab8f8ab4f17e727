/** The most of a tool's output the model gets: a command's output, an MCP result. */
export const MAX_OUTPUT_BYTES = 100 * 1024;

/** What ends an output cut at MAX_OUTPUT_BYTES; `more`: the bytes left out, when they are known. */
export function truncationMarker(more?: number): string {
  const left = more === undefined ? '' : `: ${more} more bytes not shown`;
  return `\n... [output truncated, exceeded 100KB${left}]`;
}
