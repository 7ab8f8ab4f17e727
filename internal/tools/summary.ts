/**
 * The `<summary>` of a `[tool] <name>: <summary> (success|error)` verbose line, after Go axe's:
 * what the call was about plus the one number that tells how it went.
 */
export function summarizeToolCall(
  name: string,
  input: unknown,
  output: { content: string; isError: boolean },
): string {
  const args = typeof input === 'object' && input !== null ? (input as Record<string, unknown>) : {};
  const arg = (key: string) => (typeof args[key] === 'string' ? clip(args[key] as string, 80) : '');
  const failure = output.isError ? `: ${clip(firstLine(output.content), 120)}` : '';
  switch (name) {
    case 'read_file':
      return `path "${arg('path')}"${failure || ` (${lineCount(output.content)} lines)`}`;
    case 'list_directory':
      return `path "${arg('path')}"${failure || ` (${lineCount(output.content)} entries)`}`;
    case 'write_file':
    case 'edit_file':
      return `path "${arg('path')}"${failure || ` (${firstLine(output.content)})`}`;
    case 'run_command': {
      const exit = /^(exit code \d+|killed by \w+)/.exec(output.content)?.[1];
      return `"${clip(arg('command'), 60)}" (${output.isError ? (exit ?? clip(firstLine(output.content), 120)) : 'exit 0'})`;
    }
    case 'url_fetch':
      return `url "${arg('url')}"${failure || ` (${output.content.length} chars)`}`;
    case 'web_search':
      return `query "${arg('query')}"${failure}`;
    default:
      return `${clip(JSON.stringify(input ?? {}), 80)}${failure}`;
  }
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}

function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? '';
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
