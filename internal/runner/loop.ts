import { MAX_TURNS } from '../agent/spec.js';
import { errorMessage, ProviderError, RuntimeError, TurnLimitError } from '../errors.js';
import { fanOut } from '../fanout/fanout.js';
import type { Price } from '../prices/price.js';
import {
  addUsage,
  type ChatRequest,
  type ChatResponse,
  type ChildConnections,
  emptyUsage,
  type JsonValue,
  type Message,
  type Provider,
  type StreamEvent,
  type ToolCall,
  type ToolResult,
  type Usage,
} from '../provider/types.js';
import type { ToolOutput } from '../tools/types.js';
import { emitEvent, type RunContext } from './context.js';
import { LimitReachedError } from './limits.js';
import { detailOutput, toolFailure } from './result.js';
import { outputText, type Submission, SubmittedError, type TerminalTools } from './terminal.js';
import type { AgentRunResult, ToolCallDetail } from './types.js';

/** What running one tool call produced. */
export interface ExecutedCall {
  output: ToolOutput;
  /** The agents a delegation tool ran. */
  children?: AgentRunResult[];
  /** Set by a terminal tool (`submit_result` / `submit_error`) that ends the agent. */
  submission?: Submission;
}

/** `history`: the conversation so far, ending with the assistant turn that made this call. */
export type ToolHandler = (
  call: ToolCall,
  turn: number,
  history: readonly Message[],
) => Promise<ExecutedCall>;

export interface LoopSetup {
  ctx: RunContext;
  /** The agent's name, for events. */
  agent: string;
  provider: Provider;
  /** The first request: system prompt, the user message, tools (absent = single shot), params. */
  request: ChatRequest;
  /** The agent's `maxTurns` when lower than the hard limit. */
  maxTurns?: number;
  parallel: boolean;
  handlers: ReadonlyMap<string, ToolHandler>;
  /** Tools that change files or run commands: in a parallel turn each runs alone, in call order. */
  mutating: ReadonlySet<string>;
  /** `[output]`: the agent ends only through a terminal tool; plain text gets one reminder. */
  submits?: boolean;
  /** The tools that end the agent when called. */
  terminal: TerminalTools;
  /** Work the agent started and has not collected (background children): one reminder turn. */
  uncollected?: () => string | undefined;
  /** Connections to its provider opened for the children it may start. */
  connections?: ChildConnections;
  /** The model's price, set while a budget caps dollars (each call reserves and counts them). */
  price?: Price;
}

/** Filled in as the loop goes, so the caller keeps the answer so far when the loop throws. */
export interface LoopState {
  content: string;
  stopReason: string;
  /** As served, without the provider prefix. */
  model: string;
  usage: Usage;
  cost?: number;
  /** The last call's OpenRouter cache status, when the server sent one. */
  cacheStatus?: string;
  /** Why the last call was refused or blocked, when it was. */
  refusal?: string;
  retries: number;
  turns: number;
  toolCallDetails: ToolCallDetail[];
  children: AgentRunResult[];
  /** The value a `submit_result` handed over. */
  output?: JsonValue;
  /** The conversation as the loop has built it: the request's messages, then each turn's. */
  messages: Message[];
}

export function newLoopState(): LoopState {
  return {
    content: '',
    stopReason: '',
    model: '',
    usage: emptyUsage(),
    retries: 0,
    turns: 0,
    toolCallDetails: [],
    children: [],
    messages: [],
  };
}

/**
 * The conversation loop. Without tools: one call. With tools: send → on tool calls append the
 * assistant message, run the calls (fan-out), append one tool message with every result in call
 * order → repeat, at most `min(maxTurns, 50)` turns. Every call first reserves its share of the budget.
 */
export async function runLoop(setup: LoopSetup, state: LoopState): Promise<void> {
  const { ctx, request } = setup;
  const hasTools = (request.tools?.length ?? 0) > 0;
  const limit = Math.min(setup.maxTurns ?? MAX_TURNS, MAX_TURNS);
  // A grace turn continues a conversation already told; only its own messages are new.
  const told = state.messages.length > 0;
  state.messages = [...request.messages];
  const { messages } = state;
  let pending = 0;
  let reminded = false;
  let collectReminded = false;
  let toldNoTools = false;
  const tell = (message: Message): void => emitEvent(ctx, setup.agent, { type: 'message', message });
  const add = (message: Message): void => {
    messages.push(message);
    tell(message);
  };
  if (!told) for (const message of messages) tell(message);
  /** Runs a turn's calls and adds their results; true when a terminal tool ended the agent. */
  const answer = async (calls: ToolCall[], turn: number): Promise<boolean> => {
    const { results, submission } = await runCalls(setup, state, calls, turn);
    add({ role: 'tool', results });
    pending = results.length;
    if (submission && 'error' in submission) throw new SubmittedError(submission.error);
    if (!submission) return false;
    state.output = submission.value;
    state.content = outputText(submission.value);
    // As before a plain answer; the submission stands unless the agent submits again.
    return !remindUncollected(limitReached(setup, turn, limit) !== undefined);
  };
  /**
   * Background sub-agents not collected: once, unless a limit ends the agent, the agent is told
   * which (one more turn); true when it was.
   */
  const remindUncollected = (atLimit: boolean, answered = ''): boolean => {
    const uncollected = collectReminded || atLimit ? undefined : setup.uncollected?.();
    if (uncollected === undefined) return false;
    collectReminded = true;
    if (answered !== '') add({ role: 'assistant', content: answered });
    add({ role: 'user', content: uncollected });
    pending = 0;
    return true;
  };
  // A conversation picked up where it stopped (`--resume`) may end with calls not yet answered.
  const last = messages.at(-1);
  if (last?.role === 'assistant' && last.toolCalls && last.toolCalls.length > 0) {
    if (await answer(last.toolCalls, 1)) return;
  }

  for (let turn = 1; ; turn++) {
    ctx.signal.throwIfAborted();
    const spent = ctx.limits.stop('tokens');
    if (spent) throw spent;
    const turnRequest = { ...request, messages: [...messages] };
    const release = await ctx.budget.reserve(turnRequest, ctx.signal, setup.price);
    let response: ChatResponse;
    // From the reservation on, nothing may leave it held: the calls waiting on the budget would
    // wait forever.
    try {
      emitEvent(ctx, setup.agent, {
        type: 'turn.start',
        turn,
        messages: messages.length,
        pendingToolCalls: pending,
      });
      response = await send(setup, state, turnRequest);
      ctx.budget.add(response.usage, setup.price);
      ctx.limits.addTokens(response.usage.inputTokens + response.usage.outputTokens);
    } finally {
      release();
    }
    record(state, response);
    emitEvent(ctx, setup.agent, {
      type: 'turn.end',
      turn,
      stopReason: response.stopReason,
      toolCalls: response.toolCalls.length,
      usage: response.usage,
      ...(response.model !== '' ? { model: response.model } : {}),
    });

    const reply: Message = {
      role: 'assistant',
      content: response.content,
      ...(response.toolCalls.length > 0 ? { toolCalls: response.toolCalls } : {}),
      ...(response.reasoning ? { reasoning: response.reasoning } : {}),
    };
    if (!hasTools && response.toolCalls.length > 0 && response.content.trim() === '') {
      // Only calls, from an agent offered no tools: no answer, which its caller (a person, a
      // parent agent) must not take for an empty one. The calls cannot go back as tool results
      // (a wire may refuse tool blocks in a request without tools): the model is told in words,
      // once, and asked again; a second time the agent fails. (With text beside them, the text
      // is the answer, as in Go axe.)
      if (toldNoTools || turn >= limit) throw new RuntimeError('the model gave no answer');
      toldNoTools = true;
      add({ role: 'user', content: noToolsReminder(response.toolCalls) });
      pending = 0;
      continue;
    }
    if (!hasTools || response.toolCalls.length === 0) {
      // A submission made before the reminder of uncollected sub-agents stands.
      const submitted = state.output !== undefined;
      if (!submitted) state.content = response.content;
      if (remindUncollected(turn >= limit, response.content)) continue;
      if (!setup.submits || submitted) {
        add(reply);
        return;
      }
      if (reminded || turn >= limit) throw new RuntimeError('agent ended without calling submit_result');
      // An agent with [output] ends through submit_result: a plain answer gets one reminder.
      reminded = true;
      if (response.content !== '') add({ role: 'assistant', content: response.content });
      add({ role: 'user', content: setup.terminal.reminder });
      pending = 0;
      continue;
    }
    if (response.content !== '') state.content = response.content;
    // A turn that submits runs its calls whatever the limits: the agent ends with it.
    const submitting = response.toolCalls.some((call) => setup.terminal.names.has(call.name));
    const stop = submitting ? undefined : limitReached(setup, turn, limit);
    // Kept even when a limit ends the agent here (a resume, a grace turn read it): its calls
    // then go unanswered.
    add(reply);
    if (stop) throw stop;
    if (await answer(response.toolCalls, turn)) return;
    if (submitting) {
      const later = limitReached(setup, turn, limit);
      if (later) throw later;
    }
  }
}

/** What an agent without tools is told after it called some: unknown tools, as with tools. */
function noToolsReminder(calls: readonly ToolCall[]): string {
  const names = [...new Set(calls.map((call) => JSON.stringify(call.name)))].join(', ');
  return `Unknown tool: ${names}. You have no tools: give your answer in plain text.`;
}

/**
 * Why no further turn may start after `turn`: the agent's own turn limit ends it cleanly with
 * its answer so far; Go's hard turn limit is an error; a spent tool-call budget ends it too.
 */
function limitReached(setup: LoopSetup, turn: number, limit: number): Error | undefined {
  const { ctx } = setup;
  const ownTurns = ctx.limits.limits.maxTurns;
  if (ownTurns !== undefined && ownTurns <= limit && turn >= ownTurns) {
    return new LimitReachedError('max_turns', `turn limit — ${turn} of ${ownTurns} turns`);
  }
  if (turn >= limit) return new TurnLimitError(`agent exceeded maximum conversation turns (${limit})`);
  return ctx.limits.stop('toolCalls');
}

async function send(setup: LoopSetup, state: LoopState, request: ChatRequest): Promise<ChatResponse> {
  const { ctx } = setup;
  const begun =
    ctx.warmup && state.turns === 0
      ? await ctx.warmup.before(setup.provider.name, request, ctx.signal)
      : undefined;
  try {
    return await sendNow(setup, state, request, begun);
  } finally {
    begun?.();
  }
}

function sendNow(
  setup: LoopSetup,
  state: LoopState,
  request: ChatRequest,
  begun: (() => void) | undefined,
): Promise<ChatResponse> {
  const { ctx } = setup;
  const traceparent = ctx.trace?.forChat?.(ctx.path);
  const onEvent = (event: StreamEvent): void => {
    if (event.type === 'text.delta' && ctx.stream) {
      emitEvent(ctx, setup.agent, { type: 'text.delta', text: event.text });
    } else if (event.type === 'retry') {
      const { attempt, delayMs, reason } = event;
      emitEvent(ctx, setup.agent, { type: 'retry', attempt, delayMs, reason });
    }
  };
  const answered = ctx.limiter.run(
    () =>
      setup.provider.chat(request, {
        signal: ctx.signal,
        deadline: ctx.deadline,
        onEvent,
        ...(begun ? { onAnswerBegins: begun } : {}),
        ...(setup.connections ? { connections: setup.connections } : {}),
        ...(traceparent !== undefined ? { traceparent } : {}),
      }),
    ctx.signal,
  );
  return answered.catch((error: unknown) => {
    // A call that failed after retrying still counts its retries (`retry_attempts` in --json).
    if (error instanceof ProviderError) state.retries += error.details.retries ?? 0;
    throw error;
  });
}

function record(state: LoopState, response: ChatResponse): void {
  state.turns++;
  state.stopReason = response.stopReason;
  if (response.model !== '') state.model = response.model;
  state.usage = addUsage(state.usage, response.usage);
  state.retries += response.retries;
  if (response.cost !== undefined) state.cost = (state.cost ?? 0) + response.cost;
  if (response.cacheStatus !== undefined) state.cacheStatus = response.cacheStatus;
  else delete state.cacheStatus;
  if (response.refusal !== undefined) state.refusal = response.refusal;
  else delete state.refusal;
}

async function runCalls(
  setup: LoopSetup,
  state: LoopState,
  calls: ToolCall[],
  turn: number,
): Promise<{ results: ToolResult[]; submission?: Submission }> {
  const history = state.messages;
  const { mutating } = setup;
  // A submission ends the agent at once: the calls after the first terminal one wait for it, and
  // are not run when it handed something over (a refused submission lets them run).
  const terminalAt = calls.findIndex((call) => setup.terminal.names.has(call.name));
  let submitted: Promise<boolean> = Promise.resolve(false);
  const task = (call: ToolCall, index: number): Promise<TimedCall> => {
    if (terminalAt < 0 || index < terminalAt) return runCall(setup, call, turn, history);
    if (index === terminalAt) {
      const run = runCall(setup, call, turn, history);
      submitted = run.then(
        (executed) => executed.submission !== undefined,
        () => false,
      );
      return run;
    }
    return submitted.then((ended) =>
      ended ? skipCall(setup, call, turn) : runCall(setup, call, turn, history),
    );
  };
  const settled = await fanOut(calls, task, {
    parallel: setup.parallel,
    ...(mutating.size > 0 ? { barrier: (call: ToolCall) => mutating.has(call.name) } : {}),
  });
  let submission: Submission | undefined;
  const results = settled.map((outcome, index) => {
    const call = calls[index] as ToolCall;
    const executed: TimedCall =
      outcome.status === 'fulfilled'
        ? outcome.value
        : { output: toolThrew(call, outcome.reason), durationMs: 0 };
    state.toolCallDetails.push({
      name: call.name,
      input: call.arguments,
      output: detailOutput(executed.output.content),
      isError: executed.output.isError,
      turn,
      durationMs: executed.durationMs,
    });
    if (executed.children) state.children.push(...executed.children);
    submission ??= executed.submission;
    return {
      callId: call.id,
      name: call.name,
      content: executed.output.content,
      isError: executed.output.isError,
    };
  });
  return { results, ...(submission ? { submission } : {}) };
}

type TimedCall = ExecutedCall & { durationMs: number };

async function runCall(
  setup: LoopSetup,
  call: ToolCall,
  turn: number,
  history: readonly Message[],
): Promise<TimedCall> {
  const { ctx } = setup;
  const started = Date.now();
  emitToolStart(setup, call, turn);
  let executed: ExecutedCall;
  const handler = setup.handlers.get(call.name);
  // Ending the agent is never refused for want of tool calls.
  if (!setup.terminal.names.has(call.name) && !ctx.limits.takeToolCall())
    executed = { output: toolFailure('not run: the tool-call budget is spent') };
  else if (!handler) executed = { output: toolFailure(`Unknown tool: "${call.name}"`) };
  else if (call.argumentsError !== undefined) {
    executed = { output: toolFailure(`invalid arguments for tool "${call.name}": ${call.argumentsError}`) };
  } else {
    try {
      executed = await handler(call, turn, history);
    } catch (error) {
      executed = { output: toolThrew(call, error) };
    }
  }
  const durationMs = Date.now() - started;
  emitToolEnd(setup, call, turn, executed.output, durationMs);
  return { ...executed, durationMs };
}

/** A call after a submission in the same turn: never run, and said so in its result and events. */
function skipCall(setup: LoopSetup, call: ToolCall, turn: number): TimedCall {
  const output = toolFailure(SKIPPED_AFTER_SUBMISSION);
  emitToolStart(setup, call, turn);
  emitToolEnd(setup, call, turn, output, 0, true);
  return { output, durationMs: 0 };
}

function emitToolStart(setup: LoopSetup, call: ToolCall, turn: number): void {
  emitEvent(setup.ctx, setup.agent, {
    type: 'tool.start',
    turn,
    callId: call.id,
    name: call.name,
    input: call.arguments,
  });
}

function emitToolEnd(
  setup: LoopSetup,
  call: ToolCall,
  turn: number,
  output: ExecutedCall['output'],
  durationMs: number,
  skipped?: true,
): void {
  emitEvent(setup.ctx, setup.agent, {
    type: 'tool.end',
    turn,
    callId: call.id,
    name: call.name,
    output: output.content,
    isError: output.isError,
    durationMs,
    ...(skipped ? { skipped } : {}),
  });
}

/** The result of a call skipped because an earlier call of its turn ended the agent. */
export const SKIPPED_AFTER_SUBMISSION = 'skipped: not run, an earlier call of this turn ended the agent';

/** A tool that threw instead of returning a result: an error result, and the run carries on. */
function toolThrew(call: ToolCall, error: unknown): ToolOutput {
  return toolFailure(`tool "${call.name}" failed: ${errorMessage(error)}`);
}
