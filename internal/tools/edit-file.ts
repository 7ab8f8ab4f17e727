import { constants } from 'node:fs';
import { optionalBoolean, optionalString, requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { openInSandbox, resolveInSandbox, writeInSandbox } from './sandbox.js';

export const editFileTool = defineTool(
  {
    name: 'edit_file',
    description:
      'Replace an exact string in a file relative to the working directory. old_string must match exactly once unless replace_all is true.',
    parameters: objectSchema(
      {
        path: { type: 'string', description: 'Relative path to the file to edit.' },
        old_string: { type: 'string', description: 'The exact text to replace (whitespace included).' },
        new_string: { type: 'string', description: 'The text to put in its place.' },
        replace_all: { type: 'boolean', description: 'Replace every occurrence. Defaults to false.' },
      },
      ['path', 'old_string', 'new_string'],
    ),
  },
  async (args, context) => {
    const path = requiredString(args, 'path');
    const oldString = requiredString(args, 'old_string');
    const newString = optionalString(args, 'new_string', '');
    const replaceAll = optionalBoolean(args, 'replace_all', false);
    const checked = await resolveInSandbox(context.workdir, path);
    const original = await readWholeFile(context.workdir, checked, path);
    const { text, count } = replaceExact(path, original, oldString, newString, replaceAll);
    await writeInSandbox(context.workdir, checked, Buffer.from(text, 'utf8'), path);
    return `replaced ${count} occurrence${count === 1 ? '' : 's'} in ${path}`;
  },
);

async function readWholeFile(workdir: string, checked: string, shown: string): Promise<string> {
  const handle = await openInSandbox(workdir, checked, constants.O_RDONLY, shown);
  try {
    if ((await handle.stat()).isDirectory()) throw new Error(`path "${shown}" is a directory, not a file`);
    return (await handle.readFile()).toString('utf8');
  } finally {
    await handle.close();
  }
}

/** Pure: the edited text, or an error saying how many matches there were. */
function replaceExact(
  path: string,
  text: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): { text: string; count: number } {
  const count = text.split(oldString).length - 1;
  if (count === 0) throw new Error(`old_string not found in "${path}" (0 matches)`);
  if (count > 1 && !replaceAll) {
    throw new Error(
      `old_string matches ${count} times in "${path}": add surrounding context to make it unique, or set replace_all`,
    );
  }
  return { text: text.split(oldString).join(newString), count };
}
