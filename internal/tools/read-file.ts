import { constants } from 'node:fs';
import { optionalInteger, requiredString } from './args.js';
import { inRoot, toolRoot } from './artifact-arg.js';
import { defineTool, objectSchema } from './define-tool.js';
import { openInSandbox, resolveInSandbox } from './sandbox.js';
import { readWholeFile } from './whole-file.js';

const DEFAULT_LIMIT = 2000;

export const readFileTool = defineTool(
  {
    name: 'read_file',
    description:
      "Read the contents of a file relative to the working directory. Returns line-numbered output in the format 'N: content' for each line.",
    parameters: objectSchema(
      {
        path: { type: 'string', description: 'Relative path to the file to read.' },
        offset: {
          type: 'integer',
          minimum: 1,
          description: '1-indexed line number to start reading from. Defaults to 1.',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          description: `Maximum number of lines to return. Defaults to ${DEFAULT_LIMIT}.`,
        },
      },
      ['path'],
    ),
  },
  async (args, context) => {
    const path = requiredString(args, 'path');
    const offset = optionalInteger(args, 'offset', 1, 1);
    const limit = optionalInteger(args, 'limit', DEFAULT_LIMIT, 1);
    const where = toolRoot(args, context);
    const handle = await inRoot(where, async () =>
      openInSandbox(where.root, await resolveInSandbox(where.root, path), constants.O_RDONLY, path),
    );
    let content: Buffer;
    try {
      content = await readWholeFile(
        handle,
        await handle.stat(),
        path,
        `path "${path}" is a directory, not a file (use list_directory)`,
      );
    } finally {
      await handle.close();
    }
    return formatLines(path, content, offset, limit);
  },
);

/** `N: text` lines of a text file from `offset` (1-based), at most `limit` of them. */
function formatLines(path: string, content: Buffer, offset: number, limit: number): string {
  if (content.subarray(0, 8000).includes(0)) {
    throw new Error(`path "${path}" is a binary file (NUL byte found): not shown`);
  }
  const text = content.toString('utf8');
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  if (offset > lines.length && !(offset === 1 && lines.length === 0)) {
    throw new Error(`offset ${offset} exceeds file length of ${lines.length} lines`);
  }
  return lines
    .slice(offset - 1, offset - 1 + limit)
    .map((line, i) => `${offset + i}: ${line}`)
    .join('\n');
}
