import { constants } from 'node:fs';
import { fsPromises } from '../fs/promises.js';
import { requiredString } from './args.js';
import { inRoot, toolRoot } from './artifact-arg.js';
import { defineTool, objectSchema } from './define-tool.js';
import { directoryReadPath, openInSandbox, resolveInSandbox } from './sandbox.js';

export const listDirectoryTool = defineTool(
  {
    name: 'list_directory',
    description:
      'List the contents of a directory relative to the working directory. Returns one entry per line; subdirectories are suffixed with /.',
    parameters: objectSchema(
      {
        path: {
          type: 'string',
          description: 'Relative path to the directory to list. Use "." to list the working directory root.',
        },
      },
      ['path'],
    ),
  },
  async (args, context) => {
    const path = requiredString(args, 'path');
    const where = toolRoot(args, context);
    const checked = await inRoot(where, () => resolveInSandbox(where.root, path));
    const handle = await inRoot(where, () =>
      openInSandbox(where.root, checked, constants.O_RDONLY | constants.O_DIRECTORY, path),
    );
    try {
      const entries = await fsPromises().readdir(directoryReadPath(handle, checked), { withFileTypes: true });
      return entries
        .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
        .sort()
        .join('\n');
    } finally {
      await handle.close();
    }
  },
);
