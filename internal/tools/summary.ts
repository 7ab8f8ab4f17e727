import { asRecord } from './record.js';

/**
 * The `<summary>` of a `[tool] <name>: <summary> (success|error)` verbose line, as Go axe writes
 * it: what the call was about (quoted like Go's %q) plus the one number that tells how it went.
 */
export function summarizeToolCall(
  name: string,
  input: unknown,
  output: { content: string; isError: boolean },
): string {
  const args = asRecord(input);
  const arg = (key: string): string => {
    const value = args[key];
    return typeof value === 'string' ? value : '';
  };
  const path = `path ${quote(arg('path'))}`;
  const failure = `: ${output.content}`;
  switch (name) {
    case 'read_file':
      return output.isError ? path + failure : `${path} (${lineCount(output.content)} lines)`;
    case 'list_directory':
      return output.isError ? path + failure : path;
    case 'write_file':
      return output.isError ? path + failure : `${path} (${Buffer.byteLength(arg('content'))} bytes)`;
    case 'edit_file':
      return output.isError ? path + failure : `${path} (${output.content})`;
    case 'run_command': {
      const command = quote(clip(arg('command'), 60));
      if (!output.isError) return `${command} (exit 0)`;
      const status = /^(?:exit code (-?\d+)|(killed by \w+|timed out after \d+s))\n/.exec(output.content);
      const detail = status?.[1] !== undefined ? `exit ${status[1]}` : (status?.[2] ?? output.content);
      return `${command} (${detail})`;
    }
    case 'url_fetch': {
      const url = `url ${quote(clip(withoutQuery(arg('url')), 120))}`;
      const status = /^HTTP (\d{3}): /.exec(output.content)?.[1];
      if (status) return `${url} (HTTP ${status})`;
      return output.isError
        ? `${url}: ${clip(output.content, 120)}`
        : `${url} (${output.content.length} chars)`;
    }
    case 'web_search':
      return `query ${quote(clip(arg('query'), 80))}${output.isError ? failure : ''}`;
    case 'glob_files':
    case 'grep_files': {
      const hits = output.content.startsWith('no ')
        ? 0
        : output.content.split('\n').filter((l) => !l.startsWith('(')).length;
      return `pattern ${quote(clip(arg('pattern'), 80))}${output.isError ? failure : ` (${hits} ${name === 'glob_files' ? 'files' : 'lines'})`}`;
    }
    default:
      return `${clip(JSON.stringify(input ?? {}), 80)}${output.isError ? `: ${clip(output.content, 120)}` : ''}`;
  }
}

/** Go's %q for the strings shown here: double quotes, with quotes and control characters escaped. */
function quote(text: string): string {
  return JSON.stringify(text);
}

/** Scheme, host and path only: a query string may carry a token. */
function withoutQuery(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'invalid-url';
  }
}

function lineCount(text: string): number {
  return text === '' ? 0 : text.split('\n').length;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}...`;
}
