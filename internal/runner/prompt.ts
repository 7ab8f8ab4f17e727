import path from 'node:path';
import { skillPath } from '../config/paths.js';
import { ConfigError } from '../errors.js';
import { GlobError, globFiles } from '../fs/glob.js';
import { fsPromises } from '../fs/promises.js';
import { formatBytes, readRegularFile, UnreadableFileError } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';

/** A context file: its path relative to the workdir (with `/`) and its text. */
export interface ContextFile {
  path: string;
  content: string;
}

/**
 * The Go axe layout, byte for byte, so prompts port over unchanged: the system prompt as is, then
 * `---` / `## Skill`, then `---` / `## Context Files` with each file under `### <path>` in a
 * fence tagged with its extension.
 */
export function buildSystemPrompt(
  systemPrompt: string,
  skill: string,
  files: readonly ContextFile[],
): string {
  let prompt = systemPrompt;
  if (skill !== '') prompt += `\n\n---\n\n## Skill\n\n${skill}`;
  if (files.length > 0) {
    const blocks = files.map((file) => {
      const ext = path.posix.extname(file.path).replace(/^\./, '');
      return `### ${file.path}\n\`\`\`${ext}\n${file.content}\n\`\`\``;
    });
    prompt += `\n\n---\n\n## Context Files\n\n${blocks.join('\n\n')}`;
  }
  return prompt;
}

/** `label` names where the skill was given (the agent file, or `--skill`) in the error. */
export async function readSkill(skill: string, configDir: string, label: string): Promise<string> {
  const resolved = skillPath(skill, configDir);
  try {
    return (await readRegularFile(resolved, READ_LIMITS.skill)).toString('utf8');
  } catch (error) {
    const reason =
      error instanceof UnreadableFileError
        ? error.message
        : (error as NodeJS.ErrnoException).code === 'ENOENT'
          ? 'not found'
          : 'not readable';
    throw new ConfigError(`${label}: skill "${skill}" ${reason}: ${resolved}`);
  }
}

/**
 * The files matching `patterns` under `workdir` (an absolute, real path), sorted by path. Binary
 * files (a NUL byte in the first 512), unreadable files, anything that is not a regular file (a
 * FIFO, a device, a socket) and symlinks resolving outside the workdir are skipped. A file larger
 * than READ_LIMITS.contextFile, or more than READ_LIMITS.contextTotal in all, is a config error.
 */
export async function readContextFiles(
  patterns: readonly string[],
  workdir: string,
  agentSource: string,
): Promise<ContextFile[]> {
  if (patterns.length === 0) return [];
  let matches: string[];
  try {
    matches = await globFiles(patterns, workdir);
  } catch (error) {
    if (error instanceof GlobError) throw new ConfigError(`${agentSource}: files: ${error.message}`);
    throw error;
  }
  const files: ContextFile[] = [];
  let total = 0;
  for (const relative of matches) {
    const content = await readTextInside(
      path.join(workdir, relative),
      workdir,
      `${agentSource}: files: ${relative}`,
    );
    if (content === undefined) continue;
    total += content.length;
    if (total > READ_LIMITS.contextTotal) {
      throw new ConfigError(
        `${agentSource}: files: the matched files are larger than ${formatBytes(READ_LIMITS.contextTotal)} in all`,
      );
    }
    files.push({ path: relative, content });
  }
  return files;
}

async function readTextInside(file: string, workdir: string, label: string): Promise<string | undefined> {
  const { lstat, realpath } = fsPromises();
  let data: Buffer;
  try {
    if ((await lstat(file)).isSymbolicLink()) {
      const target = await realpath(file);
      if (target !== workdir && !target.startsWith(workdir + path.sep)) return undefined;
    }
    data = await readRegularFile(file, READ_LIMITS.contextFile);
  } catch (error) {
    if (error instanceof UnreadableFileError && error.reason === 'too-large') {
      throw new ConfigError(`${label} ${error.message}`);
    }
    return undefined;
  }
  return data.subarray(0, 512).includes(0) ? undefined : data.toString('utf8');
}
