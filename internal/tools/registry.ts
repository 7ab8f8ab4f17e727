import { editFileTool } from './edit-file.js';
import { globFilesTool } from './glob-files.js';
import { grepFilesTool } from './grep-files.js';
import { listDirectoryTool } from './list-directory.js';
import { readFileTool } from './read-file.js';
import { runCommandTool } from './run-command.js';
import type { BuiltinToolName, Tool } from './types.js';
import { urlFetchTool } from './url-fetch.js';
import { webSearchTool } from './web-search.js';
import { writeFileTool } from './write-file.js';

/** Every built-in tool by name (for the toolset, `--dry-run` listings and docs). */
export const BUILTIN_TOOLS: Readonly<Record<BuiltinToolName, Tool>> = {
  list_directory: listDirectoryTool,
  read_file: readFileTool,
  write_file: writeFileTool,
  edit_file: editFileTool,
  run_command: runCommandTool,
  url_fetch: urlFetchTool,
  web_search: webSearchTool,
  glob_files: globFilesTool,
  grep_files: grepFilesTool,
};

export function isBuiltinToolName(name: string): name is BuiltinToolName {
  return Object.hasOwn(BUILTIN_TOOLS, name);
}
