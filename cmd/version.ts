import { VERSION } from '../internal/version.js';

export async function versionCommand(): Promise<number> {
  process.stdout.write(`axe version ${VERSION}\n`);
  return 0;
}
