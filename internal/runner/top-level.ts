import { loadGlobalConfig } from '../config/global.js';
import { AxeError } from '../errors.js';
import type { HttpPool } from '../provider/index.js';
import { Budget } from './budget.js';
import { CassettePlayer, CassetteRecorder } from './cassette.js';
import { type ProviderSource, type RunContext, RunDeadline } from './context.js';
import { createLimiter, effectiveMaxParallel } from './limiter.js';
import { liveProviders, replayProviders } from './providers.js';
import { failedBeforeStart } from './result.js';
import { runAgentSettled } from './run-agent.js';
import type { RunOutcome, RunRequest } from './types.js';

/**
 * A whole `axe run`: the deadline (`timeoutSeconds`, combined with the CLI's signal), the
 * tree-wide budget and limiter, the HTTP pool and the cassette. Everything it opens is closed
 * before it returns; a failed run comes back as `outcome.error` with the answer so far.
 */
export async function runTopLevel(request: RunRequest): Promise<RunOutcome> {
  const { spec } = request;
  const budget = new Budget(request.maxTokens);
  const controller = new AbortController();
  const cancel = (): void => controller.abort(request.signal.reason);
  const timeoutMs = Math.min(request.timeoutSeconds * 1000, MAX_TIMER_MS);
  const timer =
    timeoutMs > 0
      ? setTimeout(() => controller.abort(new RunDeadline(request.timeoutSeconds)), timeoutMs)
      : undefined;
  if (request.signal.aborted) cancel();
  else request.signal.addEventListener('abort', cancel, { once: true });

  let pool: HttpPool | undefined;
  let recorder: CassetteRecorder | undefined;
  try {
    let providers: ProviderSource;
    if (request.replay !== undefined) {
      providers = replayProviders(new CassettePlayer(request.replay));
    } else {
      const { createHttpPool } = await import('../provider/index.js');
      pool = createHttpPool();
      if (request.record !== undefined) recorder = new CassetteRecorder(request.record);
      providers = liveProviders({
        globalConfig: await loadGlobalConfig(request.configDir),
        env: request.env,
        pool,
        ...(recorder ? { recorder } : {}),
      });
    }
    const ctx: RunContext = {
      path: spec.name,
      depth: 0,
      maxDepth: spec.subAgentsConfig.maxDepth,
      signal: controller.signal,
      deadline: timeoutMs > 0 ? Date.now() + timeoutMs : undefined,
      deadlineSeconds: timeoutMs > 0 ? request.timeoutSeconds : undefined,
      budget,
      limiter: createLimiter(effectiveMaxParallel(spec, request.env)),
      emit: request.emit,
      providers,
      env: request.env,
      searchDirs: request.searchDirs,
      configDir: request.configDir,
      stream: request.stream,
      inheritedModel: undefined,
      overrides: {
        ...(request.modelOverride !== undefined ? { model: request.modelOverride } : {}),
        ...(request.skillOverride !== undefined ? { skill: request.skillOverride } : {}),
        ...(request.workdirOverride !== undefined ? { workdir: request.workdirOverride } : {}),
      },
    };
    const { result, error } = await runAgentSettled(spec, request.input, ctx);
    return { result, budget: budgetOf(budget), ...(error ? { error } : {}) };
  } catch (error) {
    // Setup failed (cassette, config.toml, AXE_MAX_PARALLEL): no agent ran.
    if (!(error instanceof AxeError)) throw error;
    const where = { agent: spec.name, path: spec.name, depth: 0 };
    return { result: failedBeforeStart(where, 'error', error.message, 0), budget: budgetOf(budget), error };
  } finally {
    clearTimeout(timer);
    request.signal.removeEventListener('abort', cancel);
    // Anything still in flight (a hung tool's request) is ended, not waited for.
    if (!controller.signal.aborted) controller.abort(new Error('run finished'));
    recorder?.save();
    await pool?.close();
  }
}

/** setTimeout fires at once beyond this (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

function budgetOf(budget: Budget): RunOutcome['budget'] {
  return { used: budget.used, ...(budget.limit !== undefined ? { limit: budget.limit } : {}) };
}
