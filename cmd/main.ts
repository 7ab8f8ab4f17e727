import { join } from 'node:path';
import { ExitCode } from '../internal/errors.js';
import { fsErrorReason } from '../internal/fs/fs-error.js';
import { runFromCodeCache } from './code-cache.js';
import { handleOutputErrors } from './output-errors.js';
import { versionCommand } from './version.js';

/**
 * The executable (dist/main.js). `axe version` is answered here, without loading the CLI; every
 * other command runs the CLI bundle (dist/cli.js) from V8's code cache.
 */
const argv = process.argv.slice(2);
if (argv.length === 1 && ['version', '--version', '-V'].includes(argv[0] ?? '')) {
  handleOutputErrors();
  void versionCommand();
} else {
  const cli = join(__dirname, 'cli.js');
  try {
    runFromCodeCache(cli, argv);
  } catch (error) {
    // An install with files missing or unreadable; the CLI reports its own errors.
    if ((error as NodeJS.ErrnoException).code === undefined) throw error;
    process.stderr.write(`axe: cannot start: ${cli}: ${fsErrorReason(error)} (reinstall axe)\n`);
    process.exitCode = ExitCode.runtime;
  }
}
