import { constants } from 'node:fs';
import { type FileStamp, stampOf } from '../fs/write-atomic.js';
import { optionalBoolean, optionalString, requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { openInSandbox, resolveInSandbox, writeInSandbox } from './sandbox.js';
import { readWholeFile } from './whole-file.js';

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
    const original = await readText(context.workdir, checked, path);
    const { text, count } = replaceExact(path, original.text, oldString, newString, replaceAll);
    await writeInSandbox(context.workdir, checked, Buffer.from(text, 'utf8'), path, {
      unchangedSince: original.stamp,
    });
    return `replaced ${count} occurrence${count === 1 ? '' : 's'} in ${path}`;
  },
);

// Fatal: a byte that is not UTF-8 would be written back as U+FFFD. ignoreBOM: a BOM is kept.
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * The file as text, and which version of it was read; an error when it is not UTF-8: edited and
 * written back, it would change.
 */
async function readText(
  workdir: string,
  checked: string,
  shown: string,
): Promise<{ text: string; stamp: FileStamp }> {
  const handle = await openInSandbox(workdir, checked, constants.O_RDONLY, shown);
  let bytes: Buffer;
  let stamp: FileStamp;
  try {
    const info = await handle.stat({ bigint: true });
    stamp = stampOf(info);
    bytes = await readWholeFile(handle, info, shown, `path "${shown}" is a directory, not a file`);
  } finally {
    await handle.close();
  }
  try {
    return { text: UTF8.decode(bytes), stamp };
  } catch {
    throw new Error(`path "${shown}" is not UTF-8 text: not edited (edit_file changes text files only)`);
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
