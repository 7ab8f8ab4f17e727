import { ExitCode, errorMessage, isAxeError } from '../internal/errors.js';

/**
 * The CLI entry. It only parses flags and dispatches; each command lives in its own module,
 * imported when that command runs, so `axe version` loads neither cac, ajv, undici nor the MCP SDK.
 */
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === 'version' || argv[0] === '--version')) {
  await printVersion();
} else {
  await parseAndRun();
}

async function parseAndRun(): Promise<void> {
  const { cac } = await import('cac');
  const cli = cac('axe');

  cli.command('version', 'Print the version').action(printVersion);

  cli
    .command('config <action>', 'Config directory: `axe config path` | `axe config init`')
    .example('axe config init')
    .action((action: string) => dispatch(async () => (await import('./config.js')).configCommand(action)));

  cli
    .command('agents <action> [agent]', 'Agents: list | show <agent> | init <agent> | edit <agent>')
    .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
    .example('axe agents list')
    .example('axe agents init reviewer')
    .action((action: string, agent: string | undefined, options: Record<string, unknown>) =>
      dispatch(async () => (await import('./agents.js')).agentsCommand(action, agent, options)),
    );

  cli
    .command('validate [...agents]', 'Lint agent files: schema, sub-agents, cycles, depth, tools, MCP')
    .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
    .option('--strict', 'Treat warnings as errors')
    .option('--json', 'Print the findings as JSON')
    .action((agents: string[], options: Record<string, unknown>) =>
      dispatch(async () => (await import('./validate.js')).validateCommand(agents, options)),
    );

  cli
    .command('run <agent>', 'Run an agent')
    .option('-p, --prompt <text>', 'User message (default: piped stdin, else a generic instruction)')
    .option('--model <provider/model>', "Override the agent's model")
    .option('--skill <path>', "Override the agent's skill")
    .option('--workdir <dir>', "Override the agent's working directory")
    .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
    .option('--timeout <seconds>', 'Deadline for the whole run (default: agent timeout, else 120)')
    .option('--max-tokens <n>', 'Token budget for the whole agent tree (input + output)')
    // `--no-stream` is understood without being declared: cac would print a misleading default.
    .option('--stream', "Print the answer as it arrives (--no-stream: don't; default: the agent's `stream`)")
    .option('--dry-run', 'Show the resolved run without calling any model')
    .option('--json', 'Print one JSON object with the answer, usage and the agent tree')
    .option('-v, --verbose', 'Turn, tool and sub-agent lines on stderr')
    .option('--record <file>', 'Write every provider exchange to a JSONL cassette')
    .option('--replay <file>', 'Serve every provider exchange from a cassette (no network, no key)')
    .action((agent: string, options: Record<string, unknown>) =>
      dispatch(async () => (await import('./run.js')).runCommand(agent, options)),
    );

  cli.option('--version', 'Print the version');
  cli.help();

  try {
    cli.parse(process.argv, { run: false });
    if (!cli.matchedCommand) {
      if (cli.args.length > 0) {
        process.stderr.write(`axe: unknown command "${cli.args[0]}" (see axe --help)\n`);
        process.exitCode = ExitCode.config;
      } else if (cli.options.version) {
        await printVersion();
      } else if (!cli.options.help) {
        cli.outputHelp();
      }
    } else {
      await cli.runMatchedCommand();
    }
  } catch (error) {
    // cac throws CACError for unknown options and missing arguments: a usage error.
    if (error instanceof Error && error.name === 'CACError') {
      process.stderr.write(`axe: ${error.message} (see axe --help)\n`);
      process.exitCode = ExitCode.config;
    } else {
      reportFatal(error);
    }
  }
}

function printVersion(): Promise<void> {
  return dispatch(async () => (await import('./version.js')).versionCommand());
}

async function dispatch(command: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await command();
    process.exitCode = typeof code === 'number' ? code : ExitCode.ok;
  } catch (error) {
    reportFatal(error);
  }
}

/** One line on stderr whatever the error carries (a wrapped parser message may span lines). */
function reportFatal(error: unknown): void {
  const message = errorMessage(error);
  process.stderr.write(`axe: ${message.replace(/\s*[\r\n]+\s*/g, ' ').trim()}\n`);
  if (process.env.AXE_DEBUG === '1' && error instanceof Error && error.stack) {
    process.stderr.write(`${error.stack}\n`);
  }
  process.exitCode = isAxeError(error) ? error.exitCode : ExitCode.runtime;
}
