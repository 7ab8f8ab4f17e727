import type { Message } from '../provider/types.js';
import { deadlineScope, emitEvent, type RunContext } from '../runner/context.js';
import { appendText, resolvedHistory, withoutToolBlocks } from '../runner/history.js';
import { type LoopSetup, type LoopState, runLoop, type ToolHandler } from '../runner/loop.js';
import { SUBMIT_RESULT } from './submit.js';

/**
 * The grace turn: a sub-agent stopped by its timeout or turn limit gets one last turn to answer, with
 * `submit_result` as its only tool (an agent with `[output]`) or no tool at all, under a deadline
 * of `seconds` that never outlives its caller's. True when it answered: the run then completes.
 * Otherwise the state keeps the answer it had before.
 */
export async function graceTurn(
  setup: LoopSetup,
  state: LoopState,
  stoppedBy: 'timeout' | 'max_turns',
  seconds: number,
): Promise<boolean> {
  const { caller } = setup.ctx;
  if (!caller || caller.signal.aborted) return false;
  const scope = deadlineScope(caller.signal, seconds);
  const earlier = caller.deadline !== undefined && caller.deadline <= (scope.deadline ?? Infinity);
  const ctx: RunContext = {
    ...setup.ctx,
    signal: scope.controller.signal,
    deadline: earlier ? caller.deadline : scope.deadline,
    deadlineSeconds: earlier ? caller.deadlineSeconds : seconds,
  };
  const submit = setup.submits ? setup.request.tools?.find((tool) => tool.name === SUBMIT_RESULT) : undefined;
  const handler = submit ? setup.handlers.get(SUBMIT_RESULT) : undefined;
  const history = resolvedHistory(state.messages);
  const messages: Message[] = submit ? history : withoutToolBlocks(history);
  const ask = graceMessage(stoppedBy, submit !== undefined);
  emitEvent(ctx, setup.agent, { type: 'grace.start', reason: stoppedBy, seconds });
  const answered = (yes: boolean): boolean => {
    emitEvent(ctx, setup.agent, { type: 'grace.end', answered: yes });
    return yes;
  };
  appendText(messages, 'user', ask);
  emitEvent(ctx, setup.agent, { type: 'message', message: { role: 'user', content: ask } });
  const { content, output } = state;
  const { tools: _tools, ...request } = setup.request;
  try {
    await runLoop(
      {
        ...setup,
        ctx,
        request: { ...request, messages, ...(submit ? { tools: [submit] } : {}) },
        maxTurns: 1,
        handlers: new Map<string, ToolHandler>(submit && handler ? [[SUBMIT_RESULT, handler]] : []),
      },
      state,
    );
    if (state.output !== undefined || state.content.trim() !== '') return answered(true);
  } catch {
    // The last chance was not taken: the run keeps how it stopped.
  } finally {
    scope.dispose();
  }
  state.content = content;
  if (output === undefined) delete state.output;
  return answered(false);
}

/**
 * What the grace turn tells the agent: why it stopped and that this is its last chance; a text agent
 * is asked for its answer, not for a tool it does not have.
 */
function graceMessage(stoppedBy: 'timeout' | 'max_turns', submits: boolean): string {
  const warning =
    stoppedBy === 'timeout'
      ? 'You have exceeded the time limit.'
      : 'You have reached the maximum number of turns.';
  const ask = submits
    ? 'You MUST call `submit_result` immediately with your best answer.\nDo not call any other tools.'
    : 'Give your final answer now, as plain text.\nDo not call any tools.';
  return `${warning} You have one final chance to complete the task.\n${ask}`;
}
