import { optionalString, requiredString } from './args.js';
import { inRoot, toolRoot } from './artifact-arg.js';
import { defineTool, objectSchema } from './define-tool.js';
import { makeParents, resolveToWrite, writeInSandbox } from './sandbox.js';

export const writeFileTool = defineTool(
  {
    name: 'write_file',
    description:
      'Create or overwrite a file relative to the working directory. Creates parent directories as needed. Overwrites the file if it already exists.',
    parameters: objectSchema(
      {
        path: { type: 'string', description: 'Relative path to the file to write.' },
        content: { type: 'string', description: 'The content to write to the file.' },
      },
      ['path'],
    ),
  },
  async (args, context) => {
    const path = requiredString(args, 'path');
    const content = optionalString(args, 'content', '');
    const where = toolRoot(args, context, context.artifacts?.defaultWrite);
    const data = Buffer.from(content, 'utf8');
    await inRoot(where, async () => {
      const checked = await resolveToWrite(where.root, path);
      await makeParents(checked, path);
      await writeInSandbox(where.root, checked, data, path);
    });
    if (!where.artifact) return `wrote ${data.length} bytes to ${path}`;
    context.artifacts?.record(path, data.length);
    return `wrote ${data.length} bytes to ${path} (artifact)`;
  },
);
