/**
 * `node:fs/promises`, loaded when first used: loading it costs ~2 ms (it brings readline and the
 * file watchers), which `agents list`, a dry run and a run that reads no file at run time never
 * need.
 */
export function fsPromises(): typeof import('node:fs/promises') {
  return process.getBuiltinModule('node:fs/promises');
}
