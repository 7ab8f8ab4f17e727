import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { bundleFile, bundleOf, commandOf } from '../internal/startup/bundle.js';
import { CannotStartError, runFromCodeCache } from '../internal/startup/code-cache.js';
import { exitOnceIdle } from './exit.js';
import { checkStdoutOpen, stderr } from './stdio.js';
import { versionCommand } from './version.js';

/**
 * The executable (dist/main.js). `axe version` is answered here, without loading the CLI; every
 * other command runs a CLI bundle (internal/startup/bundle.ts) from V8's code cache.
 */
exitOnceIdle();
const argv = process.argv.slice(2);
if (argv.length === 1 && ['version', '--version', '-V'].includes(argv[0] ?? '')) {
  checkStdoutOpen();
  void versionCommand();
} else {
  // Beside the real file: `node --preserve-symlinks-main` names the bin's symlink.
  const command = commandOf(argv);
  try {
    runFromCodeCache(join(dirname(realpathSync(__filename)), bundleFile(bundleOf(command))), argv, command);
  } catch (error) {
    if (!(error instanceof CannotStartError)) throw error;
    stderr.write(`axe: ${error.message}\n`);
    process.exitCode = error.exitCode;
  }
}
