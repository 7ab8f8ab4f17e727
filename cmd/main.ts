import { realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runFromCodeCache } from './code-cache.js';
import { checkStdoutOpen } from './stdio.js';
import { versionCommand } from './version.js';

/**
 * The executable (dist/main.js). `axe version` is answered here, without loading the CLI; every
 * other command runs the CLI bundle (dist/cli.js) from V8's code cache.
 */
const argv = process.argv.slice(2);
if (argv.length === 1 && ['version', '--version', '-V'].includes(argv[0] ?? '')) {
  checkStdoutOpen();
  void versionCommand();
} else {
  // Beside the real file: `node --preserve-symlinks-main` names the bin's symlink.
  runFromCodeCache(join(dirname(realpathSync(__filename)), 'cli.js'), argv);
}
