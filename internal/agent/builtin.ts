import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

let found: string | undefined;

/**
 * The agents built into axe (`explore`, `plan`): `agents/builtin/` of the installed package, last
 * in every search path, so a user's file of the same name wins. Found by walking up from this
 * module, which sits at a different depth in the bundle (`dist/`) and in the sources.
 */
export function builtinAgentsDir(): string {
  if (found === undefined) {
    let dir = import.meta.dirname;
    for (let up = 0; up < 4 && !existsSync(join(dir, 'agents', 'builtin')); up++) dir = dirname(dir);
    found = join(dir, 'agents', 'builtin');
  }
  return found;
}
