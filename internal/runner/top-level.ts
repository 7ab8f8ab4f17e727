import { qualifiedModelName } from '../agent/model.js';
import { ArtifactManifest } from '../artifacts/artifacts.js';
import { Budget } from '../budget/budget.js';
import { CassettePlayer, CassetteRecorder } from '../cassette/cassette.js';
import { AxeError, RecordingError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { createHttpPool, type HttpPool } from '../provider/index.js';
import { RateGates } from '../ratelimit/gates.js';
import {
  agentLoader,
  agentResolver,
  deadlineScope,
  emitEvent,
  type ProviderSource,
  type RunContext,
  shorterTimeout,
} from './context.js';
import type { RunEventBody } from './events.js';
import { createLimiter, effectiveMaxParallel } from './limiter.js';
import { LimitScope } from './limits.js';
import { liveProviders, replayProviders } from './providers.js';
import { failedBeforeStart, outcomeOf } from './result.js';
import { runAgentSettled } from './run-agent.js';
import type { EarlierCalls, RunOutcome, RunRequest } from './types.js';

/**
 * A whole `axe run`: the deadline (`timeoutSeconds`, combined with the CLI's signal), the
 * tree-wide budget and limiter, the HTTP pool and the cassette. Everything it opens is closed
 * before it returns; a failed run comes back as `outcome.error` with the answer so far.
 */
export async function runTopLevel(request: RunRequest): Promise<RunOutcome> {
  const { spec } = request;
  const budget = new Budget(request.maxTokens, request.sharedBudget);
  const timeoutSeconds = shorterTimeout(request.timeoutSeconds, spec.budget.timeout);
  const scope = deadlineScope(request.signal, timeoutSeconds, request.startedAt);
  const { controller } = scope;
  const artifacts = new ArtifactManifest();

  let opened: OpenedProviders | undefined;
  let outcome: RunOutcome;
  try {
    opened = await openProviders(request);
    const ctx: RunContext = {
      path: spec.name,
      depth: 0,
      maxDepth: spec.subAgentsConfig.maxDepth,
      signal: controller.signal,
      deadline: scope.deadline,
      deadlineSeconds: scope.deadline !== undefined ? timeoutSeconds : undefined,
      budget,
      limits: new LimitScope({
        ...(spec.budget.maxToolCalls !== undefined ? { maxToolCalls: spec.budget.maxToolCalls } : {}),
        ...(spec.budget.maxTurns !== undefined ? { maxTurns: spec.budget.maxTurns } : {}),
      }),
      limiter: createLimiter(effectiveMaxParallel(spec, request.env)),
      emit: request.emit,
      trace: request.trace,
      providers: opened.providers,
      loadAgent: agentLoader(request.searchDirs),
      resolveAgent: agentResolver(request.cwd),
      env: request.env,
      configDir: request.configDir,
      promptCachingDefault: opened.promptCachingDefault,
      stream: request.stream,
      inheritedModel: undefined,
      inheritedAllowedHosts: [],
      inputs: request.inputs ?? {},
      readOnly: false,
      workdirGiven: request.workdirOverride !== undefined,
      overrides: {
        ...(request.modelOverride !== undefined ? { model: request.modelOverride } : {}),
        ...(request.skillOverride !== undefined ? { skill: request.skillOverride } : {}),
        ...(request.workdirOverride !== undefined ? { workdir: request.workdirOverride } : {}),
        ...(request.artifactDirOverride !== undefined ? { artifactDir: request.artifactDirOverride } : {}),
      },
      artifacts,
      keepArtifacts: request.keepArtifacts ?? false,
      // A picked-up run's finished sub-agents: `resume` continues them as it would in their run.
      conversations: new Map(spec.subAgentsConfig.resume ? earlierConversations(request.prior) : []),
      ...(request.prior ? { prior: request.prior } : {}),
      ...(request.reuse ? { reuse: request.reuse } : {}),
      ...(request.askPerson ? { askPerson: request.askPerson } : {}),
    };
    const emit = (body: RunEventBody) => emitEvent(ctx, spec.name, body);
    emit({ type: 'agent.start', model: startModel(request), task: request.input });
    const { result, error } = await runAgentSettled(spec, request.input, ctx);
    emit({ type: 'agent.end', ...outcomeOf(result) });
    // A last call that went over the budget ends the run with its answer, but still as exit 4.
    const overBudget = error === undefined ? budget.overrun() : undefined;
    const failure = error ?? overBudget;
    outcome = { result, budget: budgetOf(budget), ...(failure ? { error: failure } : {}) };
  } catch (error) {
    // Setup failed (cassette, config.toml, AXE_MAX_PARALLEL): no agent ran.
    if (!(error instanceof AxeError)) throw error;
    const where = { agent: spec.name, path: spec.name, depth: 0 };
    outcome = {
      result: failedBeforeStart(where, 'error', error.message, 0),
      budget: budgetOf(budget),
      error,
    };
  } finally {
    scope.dispose();
    // Anything still in flight (a hung tool's request) is ended, not waited for.
    if (!controller.signal.aborted) controller.abort(new Error('run finished'));
    await (opened?.pool ?? request.pool)?.close();
  }
  if (artifacts.dir !== undefined) outcome.artifacts = artifacts.list();
  return opened?.recorder ? publishRecording(opened.recorder, request, outcome) : outcome;
}

/** The conversations of the finished sub-agents of the run `prior` picks up, by agent_id. */
function earlierConversations(prior: RunRequest['prior']): EarlierCalls['conversations'] {
  return (prior?.kind !== 'fork' ? prior?.earlier?.conversations : undefined) ?? new Map();
}

/**
 * `--record` publishes the cassette of a successful run only; a failed run leaves the previous
 * cassette as it was, and says so. A cassette that cannot be written (a full disk) fails the run
 * (exit 1) after its answer.
 */
async function publishRecording(
  recorder: CassetteRecorder,
  request: RunRequest,
  outcome: RunOutcome,
): Promise<RunOutcome> {
  const file = request.record ?? '';
  if (outcome.error) {
    warn(request, `--record: nothing recorded because the run failed; ${file} is unchanged`);
    return outcome;
  }
  try {
    await recorder.publish();
    return outcome;
  } catch (error) {
    const message = `--record: could not write ${file} (${fsErrorReason(error)}): nothing recorded, the previous cassette is unchanged`;
    return { ...outcome, error: new RecordingError(message) };
  }
}

interface OpenedProviders {
  providers: ProviderSource;
  pool?: HttpPool;
  recorder?: CassetteRecorder;
  promptCachingDefault?: boolean;
}

/** Replay: the cassette alone (no pool, no config, no key). Else live providers, maybe recorded. */
async function openProviders(request: RunRequest): Promise<OpenedProviders> {
  const { shared } = request;
  if (shared?.player) return { providers: replayProviders(shared.player) };
  if (request.replay !== undefined) {
    return { providers: replayProviders(await CassettePlayer.open(request.replay)) };
  }
  const recorder = shared
    ? shared.recorder
    : request.record !== undefined
      ? await CassetteRecorder.open(request.record)
      : undefined;
  const globalConfig = await request.globalConfig();
  for (const message of globalConfig.warnings ?? []) warn(request, message);
  const pool = shared?.pool ?? request.pool ?? createHttpPool();
  const providers = liveProviders({
    globalConfig,
    env: request.env,
    pool,
    rateGates: request.rateGates ?? new RateGates(),
    ...(recorder ? { recorder } : {}),
  });
  // What a batch shares stays open (and unpublished) for its other items.
  return {
    providers,
    ...(shared ? {} : { pool }),
    ...(recorder && !shared ? { recorder } : {}),
    ...(globalConfig.promptCaching !== undefined ? { promptCachingDefault: globalConfig.promptCaching } : {}),
  };
}

/** The top-level agent's model as the run starts: `--model`, else its file's (resolved later). */
function startModel(request: RunRequest): string {
  const { model } = request.spec;
  return request.modelOverride ?? (model ? qualifiedModelName(model) : '');
}

function budgetOf(budget: Budget): RunOutcome['budget'] {
  return { used: budget.used, ...(budget.limit !== undefined ? { limit: budget.limit } : {}) };
}

/** A warning of the run as a whole, on the event stream (the CLI prints it on stderr). */
function warn(request: RunRequest, message: string): void {
  const { name } = request.spec;
  request.emit({ type: 'warning', message, path: name, agent: name, depth: 0, time: Date.now() });
}
