import { resolve } from 'node:path';
import { locateAgent } from '../internal/agent/agent-files.js';
import { loadAgentFile } from '../internal/agent/load.js';
import { DEFAULT_TIMEOUT_SECONDS, withSystemPrompt } from '../internal/agent/spec.js';
import { batchEnding } from '../internal/batch/ending.js';
import { mapFormat } from '../internal/batch/input.js';
import { progressLine } from '../internal/batch/progress.js';
import { batchReport, renderList, renderReport } from '../internal/batch/report.js';
import { jsonLine } from '../internal/batch/result-line.js';
import { type OutFormat, openResultSink } from '../internal/batch/result-sink.js';
import { type BatchSession, prepareBatch, prepareResume, runBatch } from '../internal/batch/session.js';
import { batchesDir, batchIds, findBatch, readBatchRecord, removeBatch } from '../internal/batch/store.js';
import { type GlobalConfig, loadGlobalConfig } from '../internal/config/global.js';
import { agentLookup } from '../internal/config/paths.js';
import { ConfigError, ExitCode, errorMessage, type StopSignal } from '../internal/errors.js';
import { DEFAULT_USER_MESSAGE } from '../internal/invocation/user-message.js';
import { openEventLog } from '../internal/output/event-log.js';
import { progressMode, progressTarget } from '../internal/output/live-tree-driver.js';
import { queueUrlFrom } from '../internal/queue/url.js';
import type { RunEvent } from '../internal/runner/events.js';
import { maskSecrets } from '../internal/secrets.js';
import {
  agentsDirFlags,
  countFlag,
  firstGiven,
  lastValue,
  positiveNumberFlag,
  promptOf,
  stringFlag,
} from './argv.js';
import type { QueueRef } from './batches-queue.js';
import { stderr, stdout } from './stdio.js';
import { closeTelemetry, openTelemetry } from './telemetry.js';

const DEFAULT_CONCURRENCY = 8;
/** The batches this process got as far as starting. */
const started = new Set<string>();
/** After the first Ctrl-C, running items have this long to finish before they are cancelled. */
const STOP_GRACE_MS = 10_000;
const PROGRESS_INTERVAL_MS = 100;

/** Flags of `axe run` a batch does not take. */
const NOT_WITH_MAP: readonly (readonly [string, string])[] = [
  ['resume', '--resume'],
  ['continue', '--continue'],
  ['dryRun', '--dry-run'],
  ['json', '--json'],
  ['interactive', '--interactive'],
  ['stdinAppend', '--stdin-append'],
  ['input', '--input'],
  ['inputsJson', '--inputs-json'],
];

/** Flags of a batch on a queue, refused without one. */
const QUEUE_ONLY: readonly (readonly [string, string])[] = [
  ['wait', '--wait'],
  ['retries', '--retries'],
];

/** `--queue URL`, else `AXE_QUEUE`: where the batch goes; undefined for a batch run here. */
function queueOf(
  argv: string[],
  options: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): QueueRef | undefined {
  const flag = stringFlag(argv, options.queue, '--queue');
  const url = queueUrlFrom(flag, env);
  return url === undefined ? undefined : { url, fromFlag: flag !== undefined };
}

/** `--retries N`: how many times a failed item runs again on the workers (default 0). */
function retriesFlag(typed: string | undefined): number {
  if (typed === undefined) return 0;
  if (!/^\d+$/.test(typed))
    throw new ConfigError(`--retries: expected a whole number (0 or more), got "${typed}"`);
  return Number(typed);
}

/** `axe run <agent> --map FILE`: flags → a new batch, then run it. Returns the exit code. */
export async function mapCommand(
  agentName: string | undefined,
  options: Record<string, unknown>,
  words: string[] = [],
): Promise<number> {
  const argv = process.argv.slice(2);
  if (agentName === undefined) {
    throw new ConfigError('--map: name the agent that runs each item (axe run <agent> --map FILE)');
  }
  const env = process.env;
  const notWithMap = firstGiven(options, NOT_WITH_MAP);
  if (notWithMap) throw new ConfigError(`--map: ${notWithMap[1]} cannot be used with it`);
  if (options.record !== undefined && options.replay !== undefined) {
    throw new ConfigError('--record and --replay cannot be used together');
  }
  const map = lastValue(argv, options.map, ['--map']);
  if (map === undefined || map === '') throw new ConfigError('--map: expected a file of items (- for stdin)');
  const format = mapFormat(map, stringFlag(argv, options.mapFormat, '--map-format'));
  const agentsDirs = agentsDirFlags(options);
  const { searchDirs, configDir } = agentLookup(agentsDirs, env, process.cwd());
  const agentFile = await locateAgent(agentName, searchDirs, process.cwd());
  const loaded = await loadAgentFile(agentFile, env);
  // `--system` replaces the agent's system prompt for every item, as it does for one run.
  const system = stringFlag(argv, options.system, '--system');
  const spec = withSystemPrompt(loaded, system);
  if (options.quiet !== true) for (const warning of spec.warnings) stderr.write(`Warning: ${warning}\n`);
  const maxFailures = options.failFast === true ? 1 : countFlag(argv, options.maxFailures, '--max-failures');
  const timeout = positiveNumberFlag(options.timeout, '--timeout', 'a positive number of seconds');
  const maxTokens = countFlag(argv, options.maxTokens, '--max-tokens');
  const maxCostUsd = dollarsFlag(stringFlag(argv, options.maxCost, '--max-cost'));
  // `-p`, or the words after the agent's name, as for one run.
  const prompt = promptOf(argv, options.prompt, words);
  const out = absolute(stringFlag(argv, options.out, '--out'));
  const model = stringFlag(argv, options.model, '--model');
  const skill = stringFlag(argv, options.skill, '--skill');
  const workdir = stringFlag(argv, options.workdir, '--workdir');
  const keyField = stringFlag(argv, options.key, '--key');
  const replay = absolute(stringFlag(argv, options.replay, '--replay'));
  const record = absolute(stringFlag(argv, options.record, '--record'));
  const queue = queueOf(argv, options, env);
  if (queue === undefined) {
    const queueOnly = firstGiven(options, QUEUE_ONLY);
    if (queueOnly) throw new ConfigError(`${queueOnly[1]} needs --queue (or AXE_QUEUE)`);
  }
  // What a batch asks of its items, wherever they run.
  const asked = {
    strictInput: options.strictInput === true,
    ...(keyField !== undefined ? { keyField } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    ...(system !== undefined ? { system } : {}),
    timeoutSeconds: timeout ?? spec.timeout ?? DEFAULT_TIMEOUT_SECONDS,
    ...(model !== undefined ? { model } : {}),
    ...(skill !== undefined ? { skill } : {}),
    ...(workdir !== undefined ? { workdir } : {}),
    ...(maxTokens !== undefined ? { maxTokens } : {}),
    ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
    ...(maxFailures !== undefined ? { maxFailures } : {}),
    ...definedCounts({
      rpm: countFlag(argv, options.rpm, '--rpm'),
      tpm: countFlag(argv, options.tpm, '--tpm'),
    }),
    outFormat: outFormat(stringFlag(argv, options.outFormat, '--out-format')),
    recordRuns: options.recordRun !== false && env.AXE_NO_RUN_RECORD !== '1',
  };
  if (queue !== undefined) {
    const { enqueueCommand } = await import('./batches-queue.js');
    return enqueueCommand(queue, options, {
      ...asked,
      agent: agentName,
      spec,
      searchDirs,
      configDir,
      cwd: process.cwd(),
      env,
      input: { file: map === '-' ? '-' : resolve(map), format },
      defaultMessage: DEFAULT_USER_MESSAGE,
      retries: retriesFlag(stringFlag(argv, options.retries, '--retries')),
    });
  }
  const session = await prepareBatch(
    {
      ...asked,
      agent: agentName,
      agentFile: spec.source,
      cwd: process.cwd(),
      agentsDirs,
      input: { file: map, format },
      ...(map === '-' ? { stdin: process.stdin } : {}),
      concurrency: countFlag(argv, options.concurrency, '--concurrency') ?? DEFAULT_CONCURRENCY,
      ...(out !== undefined ? { out } : {}),
      ...(replay !== undefined ? { replay } : {}),
      ...(record !== undefined ? { record } : {}),
    },
    env,
  );
  try {
    return await execute(session, options, { searchDirs, configDir }, `${session.record.input.items} items`);
  } catch (error) {
    // Refused before any item ran (a model with no price under --max-cost, a cassette that cannot
    // be read): no batch is left behind to list or resume.
    if (!started.has(session.record.id)) await removeBatch(batchesDir(env), session.record.id);
    throw error;
  }
}

/** `axe batches list | show <id> | rm <id> | resume <id>`. */
export async function batchesCommand(
  action: string,
  ref: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  const env = process.env;
  const queue = queueOf(process.argv.slice(2), options, env);
  if (queue !== undefined) {
    return (await import('./batches-queue.js')).queueBatchesCommand(queue, action, ref, options);
  }
  const dir = batchesDir(env);
  if (action === 'list') {
    const reports = [];
    for (const id of batchIds(dir)) {
      try {
        reports.push((await batchReport(dir, await readBatchRecord(dir, id))).report);
      } catch (error) {
        stderr.write(`Warning: skipped ${errorMessage(error)}\n`);
      }
    }
    stdout.write(
      options.json === true ? `${maskSecrets(JSON.stringify(reports))}\n` : maskSecrets(renderList(reports)),
    );
    return ExitCode.ok;
  }
  if (!['show', 'rm', 'resume'].includes(action)) {
    throw new ConfigError(
      `unknown batches action "${action}": expected list, show, rm or resume${action === 'cancel' ? ' (cancel is for a batch on a queue: add --queue URL)' : ''}`,
    );
  }
  if (ref === undefined) {
    throw new ConfigError(
      `missing <batch> for "batches ${action}": a batch id, a unique prefix of one, or last`,
    );
  }
  if (action === 'resume') {
    const session = await prepareResume(
      ref,
      { force: options.force === true, retryFailed: options.retryFailed === true },
      env,
    );
    const { searchDirs, configDir } = agentLookup(session.record.agentsDirs, env, session.record.cwd);
    process.chdir(session.record.cwd);
    const kept = [...session.journaled.values()].filter(
      (r) => !session.retryFailed || r.status === 'completed',
    );
    const { items } = session.record.input;
    return execute(
      session,
      options,
      { searchDirs, configDir },
      `${items - kept.length} of ${items} items to run`,
    );
  }
  const id = findBatch(dir, ref);
  if (action === 'rm') {
    await removeBatch(dir, id);
    return ExitCode.ok;
  }
  const { report, results } = await batchReport(dir, await readBatchRecord(dir, id));
  if (options.results === true) for (const result of results) stdout.write(jsonLine(result));
  else
    stdout.write(
      options.json === true ? `${maskSecrets(JSON.stringify(report))}\n` : maskSecrets(renderReport(report)),
    );
  return ExitCode.ok;
}

/**
 * Runs a prepared batch and prints it: result lines on stdout (or `--out`), progress and the last
 * line on stderr. Ctrl-C once starts nothing new and gives running items 10 s; twice cancels them.
 */
async function execute(
  session: BatchSession,
  options: Record<string, unknown>,
  where: { searchDirs: string[]; configDir: string },
  /** Said on stderr once the batch is this process's: how many items it has. */
  startLine: string,
): Promise<number> {
  const env = process.env;
  const { record } = session;
  // A resume runs with the --system the batch was started with (batch.json keeps it).
  const spec = withSystemPrompt(await loadAgentFile(record.agentFile, env), record.system);
  let configLoad: Promise<GlobalConfig> | undefined;
  const globalConfig = (): Promise<GlobalConfig> => {
    configLoad ??= loadGlobalConfig(where.configDir);
    return configLoad;
  };
  const events = typeof options.events === 'string' ? openEventLog(options.events, stderr) : undefined;
  const sink = openResultSink(
    typeof options.out === 'string' ? resolve(options.out) : record.out,
    record.outFormat,
    stdout,
  );
  const target = progressTarget(progressMode(options.progress), { verbose: false, stream: stderr, env });
  let drawn = 0;
  let shown = false;
  const clear = () => {
    if (shown) target?.stream.write('\r\x1b[K');
    shown = false;
  };
  const said = new Set<string>();
  const emit = (event: RunEvent) => {
    events?.write(event);
    if (event.type === 'warning' && !said.has(event.message)) {
      said.add(event.message);
      clear();
      stderr.write(`Warning: ${maskSecrets(event.message)}\n`);
    }
  };
  // The batch is one trace; each item's run its own record, so the spans take no run id of the batch.
  const telemetry = await openTelemetry(env, () => undefined, globalConfig);
  const trace = telemetry?.batch({ id: record.id, agent: record.agent, items: record.input.items });
  const { control, finished } = await runBatch(session, spec, {
    env,
    ...where,
    ...(trace ? { trace } : {}),
    globalConfig,
    defaultMessage: DEFAULT_USER_MESSAGE,
    write: (result) => {
      clear();
      sink.write(result);
    },
    emit,
    ...(target
      ? {
          onCounts: (counts) => {
            const now = Date.now();
            if (now - drawn < PROGRESS_INTERVAL_MS) return;
            drawn = now;
            target.stream.write(`\r\x1b[K${progressLine(counts, now)}`);
            shown = true;
          },
        }
      : {}),
  });
  started.add(record.id);
  stderr.write(`axe: batch ${record.id}: ${startLine}\n`);
  let signal: StopSignal | undefined;
  const onSignal = (received: StopSignal) => {
    clear();
    if (signal !== undefined) {
      stderr.write(`axe: batch ${record.id}: cancelling the running items\n`);
      control.cancel();
      return;
    }
    signal = received;
    stderr.write(
      `axe: batch ${record.id}: ${received}: no new item starts; running items get ${STOP_GRACE_MS / 1000} s (Ctrl-C again cancels them)\n`,
    );
    control.stop();
    setTimeout(() => control.cancel(), STOP_GRACE_MS).unref();
  };
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const name of signals) process.on(name, onSignal);
  try {
    const { counts, stoppedBy, recordError } = await finished;
    clear();
    sink.close();
    events?.close();
    const ending = batchEnding({
      id: record.id,
      counts,
      ...(signal !== undefined ? { signal } : {}),
      ...(stoppedBy !== undefined && stoppedBy !== 'interrupted' ? { stoppedBy } : {}),
      ...(recordError ? { recordError } : {}),
    });
    for (const line of ending.lines) stderr.write(`${line}\n`);
    return ending.code;
  } finally {
    for (const name of signals) process.off(name, onSignal);
    // After the results are out: the spans leave within a bound, or are dropped with one warning.
    await closeTelemetry(telemetry);
  }
}

/** A path flag as an absolute path: `batches resume` runs from the batch's directory. */
function absolute(path: string | undefined): string | undefined {
  return path === undefined ? undefined : resolve(path);
}

function definedCounts(counts: { rpm?: number | undefined; tpm?: number | undefined }): {
  rpm?: number;
  tpm?: number;
} {
  return Object.fromEntries(Object.entries(counts).filter(([, value]) => value !== undefined));
}

/** `--max-cost`: US dollars, a plain decimal number above zero. */
function dollarsFlag(typed: string | undefined): number | undefined {
  if (typed === undefined) return undefined;
  const dollars = /^\d+(\.\d+)?$/.test(typed) ? Number(typed) : Number.NaN;
  if (!(dollars > 0))
    throw new ConfigError(`--max-cost: expected a positive number of US dollars, got "${typed}"`);
  return dollars;
}

function outFormat(value: string | undefined): OutFormat {
  if (value === undefined || value === 'jsonl' || value === 'csv') return value ?? 'jsonl';
  throw new ConfigError(`--out-format: expected jsonl or csv, got "${value}"`);
}
