import { compileGlob, GlobError } from '../fs/glob.js';
import { fsPromises } from '../fs/promises.js';
import { requiredString } from './args.js';
import { defineTool, objectSchema } from './define-tool.js';
import { walkWorkdir } from './workdir-walk.js';

/** At most this many paths come back; the rest are counted. */
export const MAX_GLOB_RESULTS = 1000;

export const globFilesTool = defineTool(
  {
    name: 'glob_files',
    description:
      'Find files by name pattern in the working directory. Returns matching paths relative to the working directory, one per line, sorted. Skips .git and what .gitignore ignores.',
    parameters: objectSchema(
      {
        pattern: {
          type: 'string',
          description:
            'Glob relative to the working directory, e.g. "src/**/*.ts" or "*.md" ("*" stays within a directory, "**" crosses directories).',
        },
      },
      ['pattern'],
    ),
  },
  async (args, context) => {
    const pattern = requiredString(args, 'pattern');
    let matches: (path: string) => boolean;
    try {
      matches = compileGlob(pattern);
    } catch (error) {
      if (error instanceof GlobError) throw new Error(error.message);
      throw error;
    }
    const { files, truncated } = await walkWorkdir(
      await fsPromises().realpath(context.workdir),
      context.signal,
    );
    const found = files.filter((file) => matches(file));
    const shown = found.slice(0, MAX_GLOB_RESULTS);
    const notes = [
      ...(found.length > shown.length
        ? [`(${found.length - shown.length} more not shown: narrow the pattern)`]
        : []),
      ...(truncated ? ['(the search stopped early: the working directory has too many files)'] : []),
    ];
    if (found.length === 0) return [`no files match ${JSON.stringify(pattern)}`, ...notes].join('\n');
    return [...shown, ...notes].join('\n');
  },
);
