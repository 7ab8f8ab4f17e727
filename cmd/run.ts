import { resolve } from 'node:path';
import { adHocSpec } from '../internal/agent/ad-hoc.js';
import { locateAgent } from '../internal/agent/agent-files.js';
import { inputsFromFlags } from '../internal/agent/inputs.js';
import { loadAgentFile } from '../internal/agent/load.js';
import { parseModelRef } from '../internal/agent/model.js';
import { type AgentSpec, DEFAULT_TIMEOUT_SECONDS, type ModelRef } from '../internal/agent/spec.js';
import { type GlobalConfig, loadGlobalConfig } from '../internal/config/global.js';
import { agentLookup } from '../internal/config/paths.js';
import {
  CancelledError,
  ConfigError,
  ExitCode,
  type StopSignal,
  signalExitCode,
} from '../internal/errors.js';
import { isTerminal } from '../internal/fs/fd-kind.js';
import { fsErrorReason } from '../internal/fs/fs-error.js';
import { dryRunView } from '../internal/invocation/dry-run-view.js';
import { DEFAULT_USER_MESSAGE, userMessage } from '../internal/invocation/user-message.js';
import { renderDryRun } from '../internal/output/dry-run.js';
import { interruptedLine } from '../internal/output/in-flight.js';
import { progressMode, progressTarget } from '../internal/output/live-tree-driver.js';
import type { RunRenderer } from '../internal/output/run-renderer.js';
import { type Pricer, pricing } from '../internal/prices/index.js';
import type { OpenRecord, PickedUp } from '../internal/record/run-record.js';
// `--dry-run` needs only this of the runner and its resolver (through dryRunView); the rest (and
// the renderers, the run record) is evaluated by a run that calls a model, not by every start of `run`.
import { shorterTimeout } from '../internal/runner/context.js';
import type { EmitEvent, RunRequest } from '../internal/runner/index.js';
import { maskSecrets } from '../internal/secrets.js';
import {
  agentsDirFlags,
  firstGiven,
  inputFlags,
  lastValue,
  positiveIntegerFlag,
  positiveNumberFlag,
  promptOf,
  switchValue,
} from './argv.js';
import { stderr, stdout } from './stdio.js';
import { closeTelemetry, openTelemetry } from './telemetry.js';

/** After a signal the run has this long to wind down before the process exits regardless. */
const SIGNAL_EXIT_GRACE_MS = 500;

const STOP_SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * `axe run <agent>`: flags → RunRequest, then render the run. Returns the exit code. With
 * `--json`, a run that fails before it runs (a bad flag, agent file or config.toml) still prints
 * its one object, the error in it.
 */
export async function runCommand(
  agentName: string | undefined,
  parsed: Record<string, unknown>,
  words: string[] = [],
): Promise<number> {
  if (parsed.map !== undefined) {
    return (await import('./batches.js')).mapCommand(agentName, withOutputFormat(parsed), words);
  }
  const answer = { printed: false };
  // Asked for before --output-format is checked, so that a bad one is printed as JSON too.
  const json = parsed.json === true || parsed.outputFormat === 'json';
  const printFailure = async (error: unknown): Promise<void> => {
    if (!json || parsed.dryRun === true || answer.printed) return;
    answer.printed = true;
    const { renderJsonFailure } = await import('../internal/output/json-envelope.js');
    stdout.write(renderJsonFailure(error));
  };
  try {
    return await runAgent(agentName, withOutputFormat(parsed), words, answer, printFailure);
  } catch (error) {
    await printFailure(error);
    throw error;
  }
}

async function runAgent(
  agentName: string | undefined,
  options: Record<string, unknown>,
  words: string[],
  answer: { printed: boolean },
  printFailure: (error: unknown) => Promise<void>,
): Promise<number> {
  const mapOnly = firstGiven(options, MAP_ONLY_FLAGS);
  if (mapOnly) throw new ConfigError(`${mapOnly[1]} needs --map`);
  const startedAt = Date.now();
  const argv = process.argv.slice(2);
  const env = process.env;
  const timeoutFlag = positiveNumberFlag(options.timeout, '--timeout', 'a positive number of seconds');
  const maxTokensFlag = positiveIntegerFlag(
    lastValue(argv, options.maxTokens, ['--max-tokens']),
    '--max-tokens',
    'a positive whole number of tokens',
  );
  const progress = progressMode(options.progress);
  if (options.record !== undefined && options.replay !== undefined) {
    throw new ConfigError('--record and --replay cannot be used together');
  }
  if (agentName === undefined && options.continue !== undefined && options.continue !== false) {
    throw new ConfigError("--continue follows an agent's recorded run: name the agent");
  }
  const picked = await pickUp(agentName, options, argv, env, words);
  // A resumed run runs as it was asked: from its directory, with its agents, flags and message.
  const asked = picked?.kind === 'pick-up' ? picked.request : undefined;
  // The files this command line names are the shell's, also for a run that goes elsewhere.
  const files = fileFlags(argv, options, asked ? process.cwd() : undefined);
  if (asked) enter(asked.cwd);
  const agentsDirs = asked?.agentsDirs ?? agentsDirFlags(options);
  const { searchDirs, configDir } = agentLookup(agentsDirs, env, process.cwd());
  // Read once, by the run record (`[runs] keep`) and the runner (providers), whichever asks first.
  let configLoad: Promise<GlobalConfig> | undefined;
  const globalConfig = (): Promise<GlobalConfig> => {
    configLoad ??= loadGlobalConfig(configDir);
    return configLoad;
  };
  const modelFlag = lastValue(argv, options.model, ['--model', '-m']);
  const systemFlag = lastValue(argv, options.system, ['--system']);
  const adHoc = asked === undefined && agentName === undefined;
  if (!adHoc && options.tools !== undefined) {
    throw new ConfigError('--tools is for a run without an agent file: an agent lists its tools in its file');
  }
  const loaded = adHoc
    ? await adHocAgent(modelFlag, lastValue(argv, options.tools, ['--tools']), systemFlag, globalConfig, env)
    : await loadAgentFile(
        asked?.agentFile ?? (await locateAgent(agentName ?? '', searchDirs, process.cwd())),
        env,
      );
  const spec = adHoc
    ? loaded
    : await withTopLevelDefaults(loaded, modelFlag, asked ? asked.system : systemFlag, globalConfig);
  // `--quiet`: warnings are not said (an error still is, and ends the run as ever).
  const sayWarning = (message: string): void => {
    if (options.quiet !== true) stderr.write(`Warning: ${message}\n`);
  };
  for (const warning of spec.warnings) sayWarning(warning);
  // Notes describe the file (a mapped tool, a default), so a look at it shows them; a run does not.
  if (options.verbose === true || options.dryRun === true)
    for (const note of spec.notes) stderr.write(`Note: ${note}\n`);
  // `[budget] timeout` (axe) bounds the run too, stdin included, and shows in --dry-run.
  const timeoutSeconds = shorterTimeout(
    timeoutFlag ?? asked?.timeoutSeconds ?? spec.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    spec.budget.timeout,
  );
  const maxTokens = maxTokensFlag ?? asked?.maxTokens ?? spec.budget.maxTokens;
  const inputs =
    asked?.inputs ??
    inputsFromFlags(inputFlags(options), lastValue(argv, options.inputsJson, ['--inputs-json']));
  const overrides = {
    modelOverride: asked ? asked.model : adHoc ? undefined : modelFlag,
    skillOverride: asked ? asked.skill : lastValue(argv, options.skill, ['--skill']),
    workdirOverride: asked ? asked.workdir : lastValue(argv, options.workdir, ['--workdir']),
    artifactDirOverride: asked ? asked.artifactDir : lastValue(argv, options.artifactDir, ['--artifact-dir']),
  };
  // `--replay` with --resume serves the resumed run from that cassette (its requests are a
  // complete run's later ones); without it, a resumed run replays what it replayed.
  const replay = files.replay ?? asked?.replay;
  const pool =
    options.dryRun === true || replay !== undefined
      ? undefined
      : (await import('../internal/runner/providers.js')).poolConnectingEarly(
          spec,
          overrides.modelOverride,
          globalConfig,
          env,
        );

  const controller = new AbortController();
  let running: () => string[] = () => [];
  let stopProgress = (): void => {};
  const stopSignals = onTerminationSignals((signal) => {
    stopProgress();
    stderr.write(interruptedLine(signal, [spec.name, ...running()]));
    controller.abort(new CancelledError(`interrupted by ${signal}`, signal));
  });
  try {
    const { input, source } = asked
      ? { input: asked.input, source: 'flag' as const }
      : await userMessage(
          { prompt: promptOf(argv, options.prompt, words), append: options.stdinAppend === true },
          { signal: controller.signal, deadlineAt: startedAt + timeoutSeconds * 1000, timeoutSeconds },
          sayWarning,
        );

    // An agent with [output] prints its checked value, never the text it streams on the way.
    const stream = spec.output === undefined && (streamFlag(argv) ?? asked?.stream ?? spec.stream ?? false);
    if (options.dryRun === true) {
      // As Go axe: a config.toml that cannot be read fails a dry run too (exit 2).
      for (const warning of (await globalConfig()).warnings ?? []) sayWarning(warning);
      const { view, warnings } = await dryRunView(spec, { configDir, env }, overrides, inputs);
      for (const warning of warnings) sayWarning(warning);
      const text = renderDryRun({
        ...view,
        timeoutSeconds,
        budgetMaxTokens: maxTokens,
        stream,
        userMessage: input,
        defaultUserMessage: DEFAULT_USER_MESSAGE,
      });
      stdout.write(maskSecrets(text));
      return ExitCode.ok;
    }

    const [
      { createRunRenderer },
      { runTopLevel },
      { closeRunRecord, nameResume, openRunRecord, recordsRun },
    ] = await Promise.all([
      import('../internal/output/run-renderer.js'),
      import('../internal/runner/index.js'),
      import('../internal/record/run-record.js'),
    ]);
    const renderer = createRunRenderer({
      json: options.json === true,
      verbose: options.verbose === true,
      quiet: options.quiet === true,
      run: { promptSource: source, timeoutSeconds, stream },
      stream,
      stdout,
      stderr,
      tty: stdout.isTTY,
      progress: progressTarget(progress, { verbose: options.verbose === true, stream: stderr, env }),
      ...definedOnly({ events: files.events }),
      eventsOnStdout: options.eventsOnStdout === true,
    });
    running = () => renderer.inFlight();
    stopProgress = () => renderer.stop();
    let record: OpenRecord | undefined;
    const telemetry = await openTelemetry(env, () => record?.recorder.id, globalConfig);
    const emit: EmitEvent = (event) => {
      renderer.emit(event);
      record?.recorder.observe(event);
      telemetry?.spans.observe(event);
    };
    // Problems of the record are warnings of the run, on its one event stream.
    const warn = (message: string) =>
      emit({ type: 'warning', message, path: spec.name, agent: spec.name, depth: 0, time: Date.now() });
    // A run without an agent file is not recorded: --resume and --continue start from an agent file.
    record =
      !adHoc && recordsRun(options, env)
        ? openRunRecord(
            globalConfig,
            env,
            {
              agent: asked?.agent ?? agentName ?? spec.name,
              agentFile: spec.source,
              input,
              inputs,
              cwd: process.cwd(),
              agentsDirs,
              ...definedOnly({
                model: overrides.modelOverride,
                system: asked ? asked.system : systemFlag,
                skill: overrides.skillOverride,
                workdir: overrides.workdirOverride,
                artifactDir: overrides.artifactDirOverride,
              }),
              timeoutSeconds,
              ...(maxTokens !== undefined ? { maxTokens } : {}),
              stream,
              ...definedOnly({ replay }),
            },
            picked ? { [picked.kind === 'pick-up' ? 'resumedFrom' : 'continuedFrom']: picked.id } : {},
            warn,
          )
        : undefined;
    if (picked?.claim) await nameResume(picked.claim, record);
    const outcome = await runTopLevel({
      spec,
      input,
      env,
      searchDirs,
      configDir,
      globalConfig,
      ...overrides,
      inputs,
      timeoutSeconds,
      startedAt,
      maxTokens,
      stream,
      record: files.record,
      replay,
      ...(pool ? { pool } : {}),
      ...(picked?.prior ? { prior: picked.prior } : {}),
      ...(picked?.reuse ? { reuse: picked.reuse } : {}),
      keepArtifacts: options.keepArtifacts === true,
      ...(options.interactive === true ? await interactive(renderer) : {}),
      signal: controller.signal,
      emit,
      ...(telemetry ? { trace: telemetry.spans } : {}),
    });
    const runId = record ? await record.recorder.created() : '';
    answer.printed = true;
    const price =
      options.json === true || options.verbose === true ? await runPricer(globalConfig, env) : undefined;
    renderer.finish(outcome, { ...(runId !== '' ? { runId } : {}), ...(price ? { price } : {}) });
    if (record) await closeRunRecord(record, outcome, warn);
    // After the answer is out: the spans leave within a bound, or are dropped with one warning.
    await closeTelemetry(telemetry);
    if (outcome.error) throw outcome.error;
    return ExitCode.ok;
  } catch (error) {
    // Before the exit below, when a signal stopped the run (reading stdin, say).
    await printFailure(error);
    throw error;
  } finally {
    stopProgress();
    // Stopped by the user: everything is aborted and reported (also a wait for stdin), so exit
    // now rather than wait for sockets to finish closing. (stdout/stderr writes are synchronous
    // on pipes and files.)
    const signal = stopSignals.received();
    if (signal) process.exit(signalExitCode(signal));
    stopSignals.runOver();
  }
}

/** The flags of a batch (`--map`), refused without it rather than ignored. */
const MAP_ONLY_FLAGS: readonly (readonly [string, string])[] = [
  ['mapFormat', '--map-format'],
  ['key', '--key'],
  ['strictInput', '--strict-input'],
  ['concurrency', '--concurrency'],
  ['out', '--out'],
  ['outFormat', '--out-format'],
  ['maxCost', '--max-cost'],
  ['maxFailures', '--max-failures'],
  ['failFast', '--fail-fast'],
  ['rpm', '--rpm'],
  ['tpm', '--tpm'],
  ['queue', '--queue'],
  ['retries', '--retries'],
  ['wait', '--wait'],
];

/**
 * The prices `--json` and `--verbose` report dollars at: config.toml's `[prices]` over the price
 * table (loaded only when an agent is priced). A config.toml that cannot be read: the table's.
 */
async function runPricer(globalConfig: () => Promise<GlobalConfig>, env: NodeJS.ProcessEnv): Promise<Pricer> {
  const config = await globalConfig().catch(() => undefined);
  return pricing(config, env);
}

/** `--resume <run>` / `--continue [run]`: the recorded run this one follows, if any. */
async function pickUp(
  agentName: string | undefined,
  options: Record<string, unknown>,
  argv: string[],
  env: NodeJS.ProcessEnv,
  words: string[],
): Promise<(PickedUp & { kind: 'pick-up' | 'follow' }) | undefined> {
  const resume = lastValue(argv, options.resume, ['--resume']);
  const follow = options.continue;
  if (resume !== undefined && follow !== undefined) {
    throw new ConfigError('--resume and --continue cannot be used together');
  }
  if (resume !== undefined) {
    if (promptOf(argv, options.prompt, []) !== undefined || words.length > 0) {
      throw new ConfigError("--resume picks up the run's own message: -p cannot be used with it");
    }
    for (const [key, flag] of RESUME_OWN_FLAGS) {
      if (options[key] !== undefined && options[key] !== false) {
        throw new ConfigError(
          `--resume runs the run with its own agents, flags and inputs: ${flag} cannot be used with it`,
        );
      }
    }
    const { resumePlan } = await import('../internal/record/run-record.js');
    const plan = await resumePlan(resume, agentName, options.force === true, env);
    const { replay } = plan.request;
    if (replay !== undefined && options.record !== undefined && options.replay === undefined) {
      throw new ConfigError(`--resume: run ${plan.id} replays ${replay}: --record cannot be used with it`);
    }
    return { kind: 'pick-up', ...plan };
  }
  if (follow === undefined || follow === false) return undefined;
  const ref = typeof follow === 'string' && follow !== '' ? follow : 'last';
  const { continuePlan } = await import('../internal/record/run-record.js');
  return { kind: 'follow', ...(await continuePlan(ref, agentName ?? '', env)) };
}

/**
 * What a resumed run takes from the run it picks up, never from its command line (the options'
 * keys and the flags): refused rather than ignored. (`--timeout`, `--max-tokens` and `--stream`
 * are honoured; so are the files `--record`, `--replay` and `--events`, and the output flags.)
 */
const RESUME_OWN_FLAGS: readonly (readonly [string, string])[] = [
  ['model', '--model'],
  ['system', '--system'],
  ['skill', '--skill'],
  ['workdir', '--workdir'],
  ['artifactDir', '--artifact-dir'],
  ['agentsDir', '--agents-dir'],
  ['input', '--input'],
  ['inputsJson', '--inputs-json'],
  ['stdinAppend', '--stdin-append'],
];

/**
 * `--record`, `--replay` and `--events` as given; with `here` (a resumed run, which then enters
 * the directory it ran in), relative to it: the shell's directory (`--events -` is stderr).
 */
function fileFlags(
  argv: string[],
  options: Record<string, unknown>,
  here: string | undefined,
): { record?: string; replay?: string; events?: string } {
  const file = (value: string | undefined): string | undefined =>
    value === undefined || here === undefined || value === '-' ? value : resolve(here, value);
  return definedOnly({
    record: file(lastValue(argv, options.record, ['--record'])),
    replay: file(lastValue(argv, options.replay, ['--replay'])),
    events: file(lastValue(argv, options.events, ['--events'])),
  });
}

/** `--resume` runs where the run it picks up ran. */
function enter(dir: string): void {
  try {
    process.chdir(dir);
  } catch (error) {
    throw new ConfigError(`--resume: cannot run in ${dir}, where the run ran (${fsErrorReason(error)})`);
  }
}

function definedOnly<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: string;
  };
}

/**
 * SIGINT / SIGTERM / SIGHUP: the first one aborts the run (the handler reports what was running);
 * a hard timer then makes sure the process exits within a second even if something hangs, and
 * the exit ends every process group a tool started. A second signal exits at once, and so does
 * one after the run is over (while its answer waits for a reader). The handlers stay until the
 * process exits: a signal that came as the run ended, and was not handled yet, would be dropped
 * with them (and the process left waiting on a reader that never reads).
 */
function onTerminationSignals(onFirst: (signal: StopSignal) => void): {
  received(): StopSignal | undefined;
  runOver(): void;
} {
  let received: StopSignal | undefined;
  let over = false;
  const handle = (signal: StopSignal): void => {
    if (received || over) process.exit(signalExitCode(signal));
    received = signal;
    onFirst(signal);
    setTimeout(() => process.exit(signalExitCode(signal)), SIGNAL_EXIT_GRACE_MS).unref();
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handle);
  return {
    received: () => received,
    runOver: () => {
      over = true;
    },
  };
}

/** `--interactive`: only with a terminal on stdin and stderr to ask on; else said once and ignored. */
async function interactive(renderer: RunRenderer): Promise<Pick<RunRequest, 'askPerson'>> {
  if (isTerminal(0) && isTerminal(2)) {
    const ask = (await import('./ask-person.js')).terminalAsker();
    return { askPerson: (...question) => renderer.held(() => ask(...question)) };
  }
  stderr.write('Warning: --interactive needs a terminal on stdin and stderr: questions go to the model\n');
  return {};
}

/**
 * `--output-format text|json|stream-json` as the flags it stands for: `json` is `--json`,
 * `stream-json` prints the event stream (`--events`) on stdout instead of the answer.
 */
function withOutputFormat(options: Record<string, unknown>): Record<string, unknown> {
  const format = options.outputFormat;
  if (format === undefined) return options;
  if (format === 'text') return options;
  if (format === 'json') return { ...options, json: true };
  if (format === 'stream-json') {
    if (options.events !== undefined || options.json === true) {
      throw new ConfigError(
        '--output-format stream-json prints the events on stdout: --events and --json cannot be used with it',
      );
    }
    return { ...options, eventsOnStdout: true };
  }
  throw new ConfigError(`--output-format: expected text, json or stream-json, got "${String(format)}"`);
}

/** `axe run -m provider/model` with no agent name: the model from `-m`, else `[defaults] model`. */
async function adHocAgent(
  modelFlag: string | undefined,
  tools: string | undefined,
  systemPrompt: string | undefined,
  globalConfig: () => Promise<GlobalConfig>,
  env: NodeJS.ProcessEnv,
): Promise<AgentSpec> {
  const model = modelFlag ?? (await globalConfig()).defaultModel;
  if (model === undefined) {
    throw new ConfigError(
      'name an agent to run, or a model to run without one (-m provider/model, or [defaults] model in config.toml)',
    );
  }
  return adHocSpec({
    model,
    modelSource: modelFlag !== undefined ? '--model' : 'config.toml: defaults.model',
    ...definedOnly({ tools, systemPrompt }),
    env,
  });
}

/**
 * The top-level agent as this command line runs it: `--system` replaces its system prompt, and a
 * model left to its caller (`inherit`), with no `--model`, is config.toml's `[defaults] model`.
 */
async function withTopLevelDefaults(
  spec: AgentSpec,
  modelFlag: string | undefined,
  systemPrompt: string | undefined,
  globalConfig: () => Promise<GlobalConfig>,
): Promise<AgentSpec> {
  const defaultModel =
    spec.model === undefined && modelFlag === undefined ? (await globalConfig()).defaultModel : undefined;
  const model = defaultModel !== undefined ? parseDefaultModel(defaultModel) : undefined;
  if (model === undefined && systemPrompt === undefined) return spec;
  return { ...spec, ...(model ? { model } : {}), ...(systemPrompt !== undefined ? { systemPrompt } : {}) };
}

function parseDefaultModel(text: string): ModelRef | undefined {
  try {
    return parseModelRef(text);
  } catch (error) {
    throw new ConfigError(`config.toml: defaults.model: ${(error as Error).message}`);
  }
}

/** `--stream` / `--no-stream` / `--stream=<bool>` when given (the last wins); else the agent file decides. */
function streamFlag(argv: string[]): boolean | undefined {
  let stream: boolean | undefined;
  for (const arg of argv) {
    if (arg === '--stream') stream = true;
    else if (arg === '--no-stream') stream = false;
    else if (arg.startsWith('--stream='))
      stream = switchValue('stream', arg.slice('--stream='.length)) === true;
  }
  return stream;
}
