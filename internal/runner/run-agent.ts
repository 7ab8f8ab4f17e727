import { agentRequestProblems } from '../agent/request-problems.js';
import type { AgentSpec } from '../agent/spec.js';
import { closeArtifactDir, type OpenArtifactDir, openArtifactDir } from '../artifacts/artifacts.js';
import {
  AxeError,
  BudgetError,
  CancelledError,
  ConfigError,
  errorMessage,
  ProviderError,
  RefusalError,
  RuntimeError,
  TurnLimitError,
  UnpricedModelError,
} from '../errors.js';
import { CacheWarmup } from '../fanout/cache-warmup.js';
import { appendEntry, formatEntry } from '../memory/memory.js';
import type { Price } from '../prices/price.js';
import type { Message, ProviderApi, ToolSpec } from '../provider/types.js';
import type { Toolset } from '../tools/types.js';
import {
  type AgentDelegation,
  type AgentTools,
  collectBackground,
  composeTools,
  forkedStart,
  graceTurn,
  openDelegation,
} from './compose-tools.js';
import { emitEvent, type RunContext, RunDeadline } from './context.js';
import type { AgentStatus, RunEventBody } from './events.js';
import { appendText, resolvedHistory } from './history.js';
import { LimitReachedError } from './limits.js';
import { type LoopSetup, type LoopState, newLoopState, runLoop } from './loop.js';
import type { ResolvedAgentRun } from './resolve.js';
import { filesTouched, type SettledRun } from './result.js';
import type { AgentRunResult, PriorConversation } from './types.js';

/**
 * The one code path for the top-level agent and every sub-agent: resolve model, workdir and
 * prompt, build the tools (none at the max depth), run the loop, close the tools. Never throws.
 */
export async function runAgentSettled(
  spec: AgentSpec,
  input: string,
  parentCtx: RunContext,
): Promise<SettledRun> {
  const started = Date.now();
  const state: LoopState = newLoopState();
  let ctx = parentCtx;
  let provider = '';
  let toolset: Toolset | undefined;
  let artifactDir: OpenArtifactDir | undefined;
  let setup: LoopSetup | undefined;
  let delegation: AgentDelegation | undefined;
  try {
    const resolved = await ctx.resolveAgent(spec, ctx);
    const { memory } = resolved;
    for (const message of memory?.warnings ?? []) emitEvent(ctx, spec.name, { type: 'warning', message });
    provider = resolved.model.provider;
    state.model = resolved.model.model;
    const { provider: chat, api } = ctx.providers.forAgent(resolved.model, spec, ctx.path);
    artifactDir = await openArtifactDir(spec, {
      flagDir: ctx.overrides.artifactDir,
      workdir: resolved.workdir,
      env: ctx.env,
    });
    if (artifactDir && ctx.depth === 0) {
      // Go axe: the run's artifact directory is `$AXE_ARTIFACT_DIR` for the sub-agents' files.
      ctx.artifacts.dir = artifactDir.dir;
      ctx = { ...ctx, env: { ...ctx.env, AXE_ARTIFACT_DIR: artifactDir.dir } };
    }
    if (spec.subAgentsConfig.cacheWarmup && !resolved.atMaxDepth)
      ctx = { ...ctx, childWarmup: new CacheWarmup() };
    delegation = openDelegation(spec, ctx, resolved, () => setup, runAgentSettled);
    const tools = await composeTools(spec, ctx, resolved, artifactDir, delegation);
    toolset = tools.toolset;
    if (api !== undefined) checkRequest(api, spec, ctx, resolved.model.model, tools.specs.length > 0);
    emitEvent(ctx, spec.name, readyEvent(spec, ctx, resolved, tools.specs));
    const price = ctx.budget.needsPrice ? pricedModel(ctx, resolved) : undefined;
    setup = loopSetup(spec, ctx, chat, resolved, tools, {
      ...(price ? { price } : {}),
      messages: firstMessages(ctx.prior, input, provider, tools.specs.length > 0),
      background: delegation.background,
      promptCachingDefault: ctx.promptCachingDefault,
    });
    await runLoop(setup, state);
    await collectBackground(delegation.background, spec, ctx, state);
    // A refusal or safety block that leaves no answer is a failure, not an empty success.
    if (state.refusal !== undefined && state.content.trim() === '') {
      throw new RefusalError(`the model gave no answer: refused or blocked (${state.refusal})`);
    }
    // Go axe remembers fully successful runs only: not one whose last call overran the budget.
    if (memory && ctx.budget.overrun() === undefined)
      await remember(spec, ctx, memory.file, input, state.content);
    return {
      result: toResult(spec, ctx, state, provider, started, 'completed'),
      conversation: state.messages,
    };
  } catch (thrown) {
    const error = typedError(thrown, ctx, provider);
    const budget = error instanceof BudgetError ? error : undefined;
    await collectBackground(delegation?.background, spec, ctx, state, budget);
    const status = statusOf(error);
    const grace = spec.budget.gracePeriod;
    if (setup && grace && ctx.depth > 0 && (status === 'timeout' || status === 'max_turns')) {
      if (await graceTurn(setup, state, status, grace)) {
        return {
          result: toResult(spec, ctx, state, provider, started, 'completed'),
          conversation: state.messages,
        };
      }
    }
    const result = toResult(spec, ctx, state, provider, started, status, error.message);
    if (error instanceof LimitReachedError) result.stopped = error.detail;
    return { result, error, conversation: state.messages };
  } finally {
    await toolset?.close();
    if (artifactDir) {
      await closeArtifactDir(artifactDir, ctx.keepArtifacts, (line) =>
        emitEvent(
          ctx,
          spec.name,
          'notice' in line
            ? { type: 'notice', message: line.notice }
            : { type: 'warning', message: line.warning },
        ),
      );
    }
  }
}

/** What the agent's request asks of `api` that it does not do: warnings, or an error (exit 2). */
function checkRequest(
  api: ProviderApi,
  spec: AgentSpec,
  ctx: RunContext,
  model: string,
  hasTools: boolean,
): void {
  const problems = agentRequestProblems(api, spec, model, hasTools);
  for (const { message } of problems.warnings) emitEvent(ctx, spec.name, { type: 'warning', message });
  if (problems.error !== undefined) throw new ConfigError(problems.error);
}

/**
 * Prompt-cache breakpoints (Anthropic, Bedrock): `[params] prompt_caching = true` the system prompt
 * (its meaning before caching was automatic), false none; left out, the automatic ones when the
 * agent may take more than one turn (it has tools and max_turns is not 1: a one-turn run would pay
 * the 25% write and never read it). A TOML agent file (Go axe's format) sends Go's bytes unless it
 * sets the field or config.toml's `[defaults] prompt_caching = true`. Siblings its parent starts
 * with `cache_warmup` share the cache: theirs even for one turn.
 */
function cachingOf(
  spec: AgentSpec,
  hasTools: boolean,
  configDefault: boolean | undefined,
  warming: boolean,
): { promptCaching?: 'system' | 'auto' } {
  const set = spec.params.promptCaching;
  if (set !== undefined) return set ? { promptCaching: 'system' } : {};
  if (warming) return { promptCaching: 'auto' };
  const byDefault = configDefault ?? spec.format !== 'toml';
  return byDefault && hasTools && spec.maxTurns !== 1 ? { promptCaching: 'auto' } : {};
}

/** The loop's setup: the agent's first request, its tools and how it runs them. */
/** The agent's price while a budget caps dollars: a model with none cannot be sent under the cap. */
function pricedModel(ctx: RunContext, resolved: ResolvedAgentRun): Price {
  const price = ctx.providers.priceOf(resolved.model);
  if (!price) throw new UnpricedModelError(`${resolved.model.provider}/${resolved.model.model}`);
  return price;
}

function loopSetup(
  spec: AgentSpec,
  ctx: RunContext,
  provider: LoopSetup['provider'],
  resolved: ResolvedAgentRun,
  tools: AgentTools,
  {
    messages,
    background,
    promptCachingDefault,
    price,
  }: {
    messages: Message[];
    background: AgentDelegation['background'];
    promptCachingDefault: boolean | undefined;
    price?: Price;
  },
): LoopSetup {
  const { params } = spec;
  const hasTools = tools.specs.length > 0;
  return {
    ctx,
    agent: spec.name,
    provider,
    request: {
      model: resolved.model.model,
      system: resolved.systemPrompt,
      messages,
      ...(hasTools ? { tools: tools.specs } : {}),
      ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
      ...(params.maxTokens !== undefined ? { maxTokens: params.maxTokens } : {}),
      ...(params.responseFormat ? { responseFormat: params.responseFormat } : {}),
      ...(params.thinkingBudget !== undefined ? { thinkingBudget: params.thinkingBudget } : {}),
      ...(params.reasoningEffort !== undefined ? { reasoningEffort: params.reasoningEffort } : {}),
      ...cachingOf(spec, hasTools, promptCachingDefault, ctx.warmup !== undefined),
      stream: ctx.stream,
    },
    ...(spec.maxTurns !== undefined ? { maxTurns: spec.maxTurns } : {}),
    ...(price ? { price } : {}),
    parallel: spec.subAgentsConfig.parallel,
    handlers: tools.handlers,
    mutating: tools.mutating,
    submits: spec.output !== undefined,
    terminal: tools.terminal,
    ...(background ? { uncollected: () => background.reminder() } : {}),
    ...(tools.connections ? { connections: tools.connections } : {}),
  };
}

/** The first request's messages: the task, after the conversation the agent starts from. */
function firstMessages(
  prior: PriorConversation | undefined,
  input: string,
  provider: string,
  hasTools: boolean,
): Message[] {
  if (!prior) return [{ role: 'user', content: input }];
  if (prior.kind === 'pick-up') return [...prior.messages];
  if (prior.kind === 'follow') {
    const messages = resolvedHistory(prior.messages);
    appendText(messages, 'user', input);
    return messages;
  }
  return forkedStart(prior.messages, input, { sameProvider: prior.provider === provider, hasTools });
}

async function remember(spec: AgentSpec, ctx: RunContext, file: string, input: string, answer: string) {
  try {
    await appendEntry(file, formatEntry(new Date(), input, answer), ctx.signal);
  } catch (error) {
    const message = `failed to save memory for "${spec.name}": ${errorMessage(error)}`;
    emitEvent(ctx, spec.name, { type: 'warning', message });
  }
}

function readyEvent(
  spec: AgentSpec,
  ctx: RunContext,
  resolved: ResolvedAgentRun,
  tools: readonly ToolSpec[],
): RunEventBody {
  const skill = ctx.overrides.skill || spec.skill;
  const { params } = spec;
  return {
    type: 'agent.ready',
    model: resolved.modelName,
    workdir: resolved.workdir,
    ...(skill ? { skill } : {}),
    files: resolved.files.length,
    tools: tools.length,
    ...(params.temperature !== undefined ? { temperature: params.temperature } : {}),
    ...(params.maxTokens !== undefined ? { maxTokens: params.maxTokens } : {}),
    ...(params.responseFormat ? { responseFormat: params.responseFormat.type } : {}),
    ...(resolved.memory ? { memory: { count: resolved.memory.count, file: resolved.memory.file } } : {}),
    system: resolved.systemPrompt,
    toolNames: tools.map((tool) => tool.name),
  };
}

/**
 * What a failure means for the exit code. When the run's signal fired, its reason wins over
 * whatever the interrupted call threw. A deadline — ours, or the provider's own abort at the same
 * deadline, whichever fired first — is a provider timeout (exit 3) named `timeout after <N>s`.
 */
function typedError(thrown: unknown, ctx: RunContext, provider: string): AxeError {
  const { signal } = ctx;
  const reason: unknown = signal.aborted ? signal.reason : undefined;
  if (reason instanceof RunDeadline) return deadlineError(reason.seconds, provider);
  if (signal.aborted) return reason instanceof AxeError ? reason : new CancelledError();
  const deadlinePassed = ctx.deadline !== undefined && Date.now() >= ctx.deadline;
  if (thrown instanceof ProviderError && thrown.category === 'timeout' && deadlinePassed) {
    return deadlineError(ctx.deadlineSeconds ?? 0, provider);
  }
  if (thrown instanceof AxeError) return thrown;
  return new RuntimeError(errorMessage(thrown), { cause: thrown });
}

class DeadlineError extends ProviderError {}

function deadlineError(seconds: number, provider: string): ProviderError {
  return new DeadlineError(`timeout after ${seconds}s`, { category: 'timeout', provider });
}

function statusOf(error: AxeError): AgentStatus {
  if (error instanceof BudgetError) return 'budget_exceeded';
  if (error instanceof DeadlineError) return 'timeout';
  if (error instanceof TurnLimitError) return 'max_turns';
  if (error instanceof LimitReachedError) return error.status;
  if (error instanceof CancelledError) return 'cancelled';
  return 'error';
}

function toResult(
  spec: AgentSpec,
  ctx: RunContext,
  state: LoopState,
  provider: string,
  started: number,
  status: AgentStatus,
  error?: string,
): AgentRunResult {
  return {
    agent: spec.name,
    path: ctx.path,
    depth: ctx.depth,
    status,
    content: state.content,
    ...(state.output !== undefined ? { output: state.output } : {}),
    model: provider === '' ? '' : `${provider}/${state.model}`,
    stopReason: state.stopReason,
    usage: state.usage,
    ...(state.cost !== undefined ? { cost: state.cost } : {}),
    ...(state.cacheStatus !== undefined ? { cacheStatus: state.cacheStatus } : {}),
    ...(state.refusal !== undefined ? { refusal: state.refusal } : {}),
    retries: state.retries,
    turns: state.turns,
    durationMs: Date.now() - started,
    toolCalls: state.toolCallDetails.length,
    toolCallDetails: state.toolCallDetails,
    ...filesTouched(state.toolCallDetails),
    children: state.children,
    ...(error !== undefined ? { error } : {}),
  };
}
