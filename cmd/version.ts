import { VERSION } from '../internal/version.js';
import { stdout } from './stdio.js';

export async function versionCommand(): Promise<number> {
  stdout.write(`axe version ${VERSION}\n`);
  return 0;
}
