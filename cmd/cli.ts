import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { ConfigError, ExitCode, errorMessage, isAxeError } from '../internal/errors.js';
import { systemErrorLine } from '../internal/fs/fs-error.js';
import { addSecretsFromEnvLater, maskSecrets } from '../internal/secrets.js';
import { type Bundle, bundleFile, callBundle, commandOf } from '../internal/startup/bundle.js';
import { flagAsTyped, joinNegativeValues, lastWins, runWantsJson, switchValuesAsBooleans } from './argv.js';
import { exitIfNothingLeft } from './exit.js';
import { checkStdoutOpen, stderr, stdout } from './stdio.js';

/**
 * The CLI (dist/cli.js, started by main.ts from V8's code cache). It only parses flags and
 * dispatches; a command's own module is evaluated when that command runs, and the heavy packages
 * (ajv, yaml, undici, the MCP SDK) are required by the code that needs them.
 */
const argv = process.argv.slice(2);

/**
 * Which bundle this is (internal/startup/bundle.ts), set by scripts/build.mjs. Each action tests it
 * in place, so that esbuild drops the commands a bundle leaves out.
 */
declare const AXE_BUNDLE: Bundle;

checkStdoutOpen();
// cac prints help and its version line with console.info: through axe's stdout like any output.
console.info = (...parts: unknown[]) => stdout.write(`${parts.join(' ')}\n`);
addSecretsFromEnvLater(process.env);
void parseAndRun();

/**
 * The command the arguments start with (`axe run …`), when they do: only it is declared to cac,
 * which would otherwise build and parse every command's options at every start. Anything else
 * (`axe`, `axe --help`, a flag first, an unknown command) declares them all.
 */
const named = commandOf(argv) === argv[0] ? argv[0] : undefined;
const declared = (command: string): boolean => named === undefined || named === command;

async function parseAndRun(): Promise<void> {
  const { cac } = await import('cac');
  const cli = cac('axe');

  if (declared('version')) cli.command('version', 'Print the version').action(printVersion);

  if (declared('config')) {
    const config = cli
      .command('config [action]', 'Config directory: `axe config path` | `axe config init`')
      .usage('config <action>')
      .example('axe config init');
    config.action((action: string | undefined) =>
      action === undefined
        ? config.outputHelp()
        : AXE_BUNDLE === 'all'
          ? dispatch(async () => (await import('./config.js')).configCommand(action))
          : runFullCli(),
    );
  }

  if (declared('agents')) {
    const agents = cli
      .command('agents [action] [agent]', 'Agents: list | show <agent> | init <agent> | edit <agent>')
      .usage('agents <action> [agent]')
      .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
      .option('--json', 'show: every resolved field as JSON (where the key comes from, warnings)')
      .option('--all', "list: axe's built-in agents (explore, plan) too")
      .example('axe agents list')
      .example('axe agents init reviewer');
    agents.action(
      (action: string | undefined, agent: string | undefined, options: Record<string, unknown>) =>
        action === undefined
          ? agents.outputHelp()
          : AXE_BUNDLE !== 'run'
            ? dispatch(async () =>
                (await import('./agents.js')).agentsCommand(action, agent, lastWins(options, switches)),
              )
            : runFullCli(),
    );
  }

  if (declared('validate'))
    cli
      .command('validate [...agents]', 'Lint agent files: schema, sub-agents, cycles, depth, tools, MCP')
      .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
      .option('--strict', 'Treat warnings as errors')
      .option('--json', 'Print the findings as JSON')
      .action((agents: string[], options: Record<string, unknown>) =>
        AXE_BUNDLE !== 'run'
          ? dispatch(async () =>
              (await import('./validate.js')).validateCommand(agents, lastWins(options, switches)),
            )
          : runFullCli(),
      );

  if (declared('run'))
    cli
      .command('run [agent] [...prompt]', 'Run an agent, or a model with no agent file (-m, -p)')
      .usage(
        'run <agent> [prompt]   (axe run -m <provider/model> -p <text>: no agent file; axe run --resume <run>: no agent)',
      )
      .option('-p, --prompt <text>', 'User message (default: piped stdin, else a generic instruction)')
      .option('--stdin-append', 'With -p: send the -p text, a blank line, then piped stdin')
      .option('-m, --model <provider/model>', "Override the agent's model (no agent: the model to run)")
      .option('--system <text>', "Replace the agent's system prompt")
      .option('--tools <names>', 'No agent: the built-in tools it may use, comma-separated (default: none)')
      .option('--skill <path>', "Override the agent's skill")
      .option('--workdir <dir>', "Override the agent's working directory")
      .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
      .option('--timeout <seconds>', 'Deadline for the whole run (default: agent timeout, else 120)')
      .option(
        '--max-tokens <n>',
        'Token budget for the whole agent tree (input + output; with --map: the whole batch)',
      )
      .option('--input <name=value>', "A typed input of the agent (repeatable; see the agent's [input])")
      .option('--inputs-json <json>', 'Typed inputs as one JSON object')
      // `--no-stream` is understood without being declared: cac would print a misleading default.
      .option(
        '--stream',
        "Print the answer as it arrives (--no-stream: don't; default: the agent's `stream`)",
      )
      .option('--dry-run', 'Show the resolved run without calling any model')
      .option('--json', 'Print one JSON object with the answer, usage and the agent tree')
      .option(
        '--output-format <format>',
        'text (the answer) | json (as --json) | stream-json (every event as a JSON line on stdout)',
      )
      .option('-v, --verbose', 'Turn, tool and sub-agent lines on stderr')
      .option('-q, --quiet', 'No warnings on stderr (errors are still said)')
      .option(
        '--progress <when>',
        'Live agent tree on stderr: never | auto (a terminal, not --verbose) | always',
      )
      .option('--record <file>', 'Write every provider exchange to a JSONL cassette')
      .option('--replay <file>', 'Serve every provider exchange from a cassette (no network, no key)')
      .option('--artifact-dir <dir>', 'Artifact directory (relative to the workdir); turns artifacts on')
      .option('--keep-artifacts', 'Keep an auto-generated artifact directory after the run')
      .option('--interactive', "At a terminal: sub-agents' ask_parent questions to this agent go to you")
      .option(
        '--record-run',
        'Record the run under <data dir>/runs (the default; --no-record-run or AXE_NO_RUN_RECORD=1: no record)',
      )
      .option('--events <file>', 'Write every event of the run as JSON lines to <file> (- for stderr)')
      .option('--continue [run]', "Send the message after a recorded run's conversation (default: last)")
      .option('--resume <run>', 'Finish a recorded run that stopped, reusing its completed sub-agents')
      .option('--force', '--resume: even when the agent file changed since')
      .option(
        '--map <file>',
        'A batch: run the agent once per item of a JSONL/CSV/TSV/lines file (- for stdin)',
      )
      .option('--map-format <format>', '--map: jsonl | csv | tsv | lines (default: by the file extension)')
      .option('--key <field>', "--map: the field naming each item (unique; default: the item's line number)")
      .option('--strict-input', '--map: a malformed item refuses the batch before it starts')
      .option('--concurrency <n>', '--map: items run at a time (default 8)')
      .option('--out <file>', '--map: write the result lines to <file> instead of stdout')
      .option('--out-format <format>', '--map: jsonl (default) | csv')
      .option('--max-failures <n>', '--map: stop starting items after n failed ones (exit 4)')
      .option('--max-cost <usd>', "--map: dollar budget of the whole batch, at the models' prices (exit 4)")
      .option('--rpm <n>', '--map: at most n requests per minute to each provider, over every item')
      .option('--tpm <n>', '--map: at most n tokens per minute to each provider, over every item')
      .option('--fail-fast', '--map: stop starting items after the first failed one (exit 4)')
      .option('--queue <url>', '--map: store the batch on PostgreSQL for axe workers (default: AXE_QUEUE)')
      .option('--retries <n>', '--queue: run a failed item again up to n times (default 0)')
      .option('--wait', '--queue: then print the result lines as a local batch does, and its exit code')
      .example('axe run reviewer < changes.diff')
      .example('axe run reviewer "review the error handling" --json')
      .example('axe run -m openai/gpt-5-mini -p "name three prime numbers"')
      .example('git diff | axe run -m anthropic/claude-haiku-5-5 --system "You review diffs." --stream')
      .action((agent: string | undefined, words: string[], options: Record<string, unknown>) =>
        AXE_BUNDLE !== 'agent-files'
          ? dispatch(async () =>
              (await import('./run.js')).runCommand(agent, lastWins(options, switches), words),
            )
          : runFullCli(),
      );

  if (declared('runs')) {
    const runs = cli
      .command(
        'runs [action] [run]',
        'Run records: list | show <run> | rm <run> (a run id, a prefix, or last)',
      )
      .usage('runs <action> [run]')
      .option('--json', 'list, show: as JSON')
      .option('--transcript <agent-path>', "show: that agent's conversation")
      .option('--html', 'show: a self-contained HTML timeline of the run')
      .example('axe runs show last');
    runs.action((action: string | undefined, run: string | undefined, options: Record<string, unknown>) =>
      action === undefined
        ? runs.outputHelp()
        : AXE_BUNDLE === 'all'
          ? dispatch(async () =>
              (await import('./runs.js')).runsCommand(action, run, lastWins(options, switches)),
            )
          : runFullCli(),
    );
  }

  if (declared('models'))
    cli
      .command('models', 'Providers (where each key comes from), model aliases and the default model')
      .option('--json', 'As JSON')
      .action((options: Record<string, unknown>) =>
        AXE_BUNDLE === 'all'
          ? dispatch(async () => (await import('./models.js')).modelsCommand(lastWins(options, switches)))
          : runFullCli(),
      );

  if (declared('batches'))
    cli
      .command(
        'batches <action> [batch]',
        'Batches (axe run --map): list | show <batch> | rm <batch> | resume <batch> | cancel <batch> (--queue) (an id, a prefix, or last)',
      )
      .option('--queue <url>', 'The batches on this PostgreSQL queue (default: AXE_QUEUE)')
      .option('--json', 'list, show: as JSON')
      .option('--results', 'show: the result lines journaled so far, in input order')
      .option('--retry-failed', 'resume: run the items that did not complete again too')
      .option('--force', 'resume: even when the input file changed since')
      .option(
        '--out <file>',
        'resume: write the result lines to <file> (default: where the batch wrote them)',
      )
      .option('--events <file>', 'resume: write every event as JSON lines to <file> (- for stderr)')
      .option('--progress <when>', 'resume: a progress line on stderr: never | auto | always')
      .example('axe batches show last')
      .action((action: string, batch: string | undefined, options: Record<string, unknown>) =>
        AXE_BUNDLE === 'all'
          ? dispatch(async () =>
              (await import('./batches.js')).batchesCommand(action, batch, lastWins(options, switches)),
            )
          : runFullCli(),
      );

  if (declared('worker'))
    cli
      .command(
        'worker',
        'Run the items of batches queued in PostgreSQL (axe run --map … --queue), on this machine',
      )
      .option(
        '--queue <url>',
        'The PostgreSQL of the queue: postgres://user@host:5432/db (default: $AXE_QUEUE)',
      )
      .option('--concurrency <n>', 'Items run at once (default 8)')
      .option(
        '--lease <seconds>',
        'Heartbeat lease: a worker silent this long is taken for dead and its items run elsewhere; also the grace running items get at Ctrl-C / SIGTERM (default 60)',
      )
      .option(
        '--workdir <dir>',
        "Where the batches' stored agent trees and working copies go (default: <cache dir>/axe/worker)",
      )
      .option('--exit-when-idle', 'Exit once nothing runs here and no queued item is left')
      .example('axe worker --queue postgres://axe@db.internal/axe --concurrency 16')
      .action((options: Record<string, unknown>) =>
        AXE_BUNDLE === 'all'
          ? dispatch(async () => (await import('./worker.js')).workerCommand(lastWins(options, switches)))
          : runFullCli(),
      );

  if (declared('gc'))
    cli
      .command('gc [agent]', "Analyze an agent's memory with its model, then trim it (Go axe's gc)")
      .option('--all', 'Every agent with memory enabled')
      .option('--dry-run', 'Print the analysis without trimming')
      .option('--model <provider/model>', "Override the agent's model for the analysis")
      .option('--agents-dir <dir>', 'Look for agents here first (repeatable)')
      .option('--record <file>', 'Write the model exchange to a JSONL cassette')
      .option('--replay <file>', 'Serve the model exchange from a cassette (no network, no key)')
      .example('axe gc reviewer --dry-run')
      .action((agent: string | undefined, options: Record<string, unknown>) =>
        AXE_BUNDLE === 'all'
          ? dispatch(async () => (await import('./gc.js')).gcCommand(agent, lastWins(options, switches)))
          : runFullCli(),
      );

  cli.option('-V, --version', 'Print the version');
  cli.help((sections) => withDocsPage(sections, cli.commands));

  // The actions above run after this line: they normalise their options with these switches.
  const switches = new Set(
    [cli.globalCommand, ...cli.commands].flatMap((command) =>
      command.options.filter((option) => option.isBoolean).flatMap((option) => option.names),
    ),
  );
  const takesNoValue = new Set(
    [cli.globalCommand, ...cli.commands].flatMap((command) =>
      command.options
        .filter((option) => !option.required)
        .flatMap((option) => option.rawName.match(/--?[\w-]+/g) ?? []),
    ),
  );
  try {
    const normalized = joinNegativeValues(switchValuesAsBooleans(argv, switches), takesNoValue);
    cli.parse([...process.argv.slice(0, 2), ...normalized], { run: false });
    if (cli.matchedCommand) {
      await cli.runMatchedCommand();
      return;
    }
    const unknown = Object.keys(cli.options).find(
      (key) => !['--', 'help', 'h', 'version', 'V'].includes(key),
    );
    const [first, topic] = cli.args;
    if (cli.options.help && commandOf(argv) !== 'other') {
      // cac printed that command's help (`axe run reviewer --json --help`): its words and flags
      // are not checked, as a help asked for is the answer.
    } else if (unknown !== undefined) {
      await usageError(
        `unknown option ${flagAsTyped(unknown.length > 1 ? `--${unknown}` : `-${unknown}`, argv)}`,
      );
    } else if (first === 'help') {
      const command = cli.commands.find((c) => c.name === topic);
      if (topic !== undefined && !command) await usageError(`unknown command "${topic}"`);
      else (command ?? cli.globalCommand).outputHelp();
    } else if (first !== undefined) {
      await usageError(`unknown command "${first}"`);
    } else if (cli.options.version) {
      await printVersion();
    } else if (!cli.options.help) {
      cli.outputHelp();
    }
  } catch (error) {
    // cac throws CACError for unknown options and missing arguments: a usage error.
    if (error instanceof Error && error.name === 'CACError') {
      const unknown = /^Unknown option `(.+)`$/.exec(error.message)?.[1];
      await usageError(
        unknown !== undefined ? `unknown option ${flagAsTyped(unknown, argv)}` : error.message,
      );
    } else {
      reportFatal(error);
    }
  }
}

/** The page that explains each command, in the docs shipped with axe. */
const DOCS_PAGES: Record<string, string> = {
  run: 'docs/run.md',
  agents: 'docs/agent-files.md',
  validate: 'docs/agent-files.md',
  config: 'docs/config.md',
  runs: 'docs/records.md',
  batches: 'docs/batches.md',
  worker: 'docs/scale.md',
  gc: 'docs/memory-and-artifacts.md',
  models: 'docs/config.md',
  version: 'README.md',
};

/** What axe is, under its name at the top of `axe --help`. */
const DESCRIPTION =
  'A declarative LLM agent runner: agents in TOML, Markdown or YAML files, sub-agents in parallel, for scripts, cron and CI.';

/** `axe run --help`: what a script needs beside the flags. */
const RUN_SECTIONS: readonly { title: string; body: string }[] = [
  {
    title: 'Environment',
    body: [
      "  <PROVIDER>_API_KEY        a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, …)",
      "  AXE_<PROVIDER>_BASE_URL   a provider's base URL (a loopback one needs no key)",
      '  AXE_SUBAGENT_MODEL        the model of every sub-agent of the run',
      '  AXE_MAX_PARALLEL          run-wide limit of concurrent sub-agents (default 64)',
      '  AXE_NO_RUN_RECORD=1       no run record',
      '  AXE_DEBUG=1               stack traces with errors',
      '  XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_CACHE_HOME   where config, records and caches live',
    ].join('\n'),
  },
  {
    title: 'Exit codes',
    body: [
      '  0  the answer is on stdout',
      '  1  runtime error (a tool, a file, an unsupported provider)',
      '  2  bad agent file, flag or config (nothing was sent)',
      '  3  the provider or the network failed',
      '  4  a budget or the timeout ran out',
      '  130, 143, 129  interrupted by Ctrl-C, SIGTERM, SIGHUP',
    ].join('\n'),
  },
];

/**
 * Every help page: the name with a line saying what it is, cac's sections, what `run` needs beside
 * its flags, and a `Docs:` line with the page's path in this install (`axe --help`: the README).
 */
function withDocsPage(
  sections: { title?: string; body: string }[],
  commands: readonly { name: string; description: string }[],
): { title?: string; body: string }[] {
  const usage = sections.find((section) => section.title === 'Usage')?.body ?? '';
  const command = /\$ axe (\w+)/.exec(usage)?.[1];
  const described = commands.find((entry) => entry.name === command)?.description;
  const [, ...rest] = sections;
  const header = command === undefined ? `axe\n${DESCRIPTION}` : `axe ${command}\n${described ?? ''}`;
  const page = command === undefined ? 'README.md' : DOCS_PAGES[command];
  return [
    { body: header.trimEnd() },
    ...rest.map((section) =>
      section.title === 'Examples' ? { ...section, body: section.body.replace(/^/gm, '  $ ') } : section,
    ),
    ...(command === 'run' ? RUN_SECTIONS : []),
    ...(page === undefined ? [] : [{ title: 'Docs', body: `  ${join(import.meta.dirname, '..', page)}` }]),
  ];
}

async function usageError(message: string): Promise<void> {
  // It names the help of the command the arguments are for (`axe run --help`), else axe's own.
  const command = commandOf(argv);
  const help = command === 'other' ? 'axe --help' : `axe ${command} --help`;
  // It quotes the arguments: a key pasted in the wrong place is not printed back.
  stderr.write(`axe: ${maskSecrets(message)} (see ${help})\n`);
  process.exitCode = ExitCode.config;
  // `axe run … --json` prints one object on every outcome: a flag cac refused included. (The
  // agent-files bundle never parses `run`: the test lets esbuild leave the envelope out of it.)
  if (AXE_BUNDLE !== 'agent-files' && command === 'run' && runWantsJson(argv)) {
    const { renderJsonFailure } = await import('../internal/output/json-envelope.js');
    stdout.write(renderJsonFailure(new ConfigError(message)));
  }
}

function printVersion(): Promise<void> {
  return dispatch(async () => (await import('./version.js')).versionCommand());
}

/**
 * A command outside this bundle: main.js chose it from the first word that is not a flag, which can
 * be a flag's value (`axe --agents-dir run agents list`). The full CLI, loaded now, parses the same
 * arguments and runs the command; nothing has been done yet that it would do again.
 */
async function runFullCli(): Promise<void> {
  const file = join(import.meta.dirname, bundleFile('all'));
  callBundle(new Script(readFileSync(file, 'latin1'), { filename: file }), file);
}

async function dispatch(command: () => Promise<number | undefined>): Promise<void> {
  try {
    const code = await command();
    process.exitCode = typeof code === 'number' ? code : ExitCode.ok;
  } catch (error) {
    reportFatal(error);
  }
  exitIfNothingLeft();
}

/** One line on stderr whatever the error carries (a wrapped parser message may span lines). */
function reportFatal(error: unknown): void {
  const message = maskSecrets(
    (isAxeError(error) ? undefined : systemErrorLine(error)) ?? errorMessage(error),
  );
  stderr.write(`axe: ${message.replace(/\s*[\r\n]+\s*/g, ' ').trim()}\n`);
  if (process.env.AXE_DEBUG === '1' && error instanceof Error && error.stack) {
    stderr.write(`${maskSecrets(error.stack)}\n`);
  }
  process.exitCode = isAxeError(error) ? error.exitCode : ExitCode.runtime;
}
