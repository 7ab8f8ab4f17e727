import { setMaxListeners } from 'node:events';
import { followParent, withTimeout } from '../abort.js';
import type { AgentSpec } from '../agent/spec.js';
import { type AxeError, type BudgetError, CancelledError } from '../errors.js';
import type { JsonObject, ToolCall, ToolSpec } from '../provider/types.js';
import { childPath } from '../runner/agent-path.js';
import { emitEvent, type RunContext } from '../runner/context.js';
import type { ExecutedCall, LoopState, ToolHandler } from '../runner/loop.js';
import { toolFailure } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';
import { optionalBoolean, optionalInteger } from '../tools/args.js';
import { TASK_OUTPUT_TOOL_NAME } from '../tools/types.js';
import { ChildRegistry } from './registry.js';

const DEFAULT_WAIT_SECONDS = 300;

/**
 * The background children of one agent run (`[sub_agents_config] background = true`):
 * started by `call_agent` with `run_in_background`, read with `task_output`. They run under the
 * agent's signal and limits; none outlives the agent — when it finishes, every one still running
 * is cancelled and waited for.
 */
export class BackgroundChildren {
  readonly registry = new ChildRegistry<AgentRunResult>();
  private readonly controller: AbortController;
  /** Stops following the agent's signal. */
  private readonly unfollow: () => void;
  private readonly running = new Map<string, Promise<AgentRunResult>>();
  private finished = false;

  constructor(agentSignal: AbortSignal) {
    const { controller, dispose } = followParent(agentSignal);
    this.controller = controller;
    this.unfollow = dispose;
    setMaxListeners(0, controller.signal);
  }

  /** What a background child runs under: the agent's signal, and its end. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /**
   * Starts a child of `parent` (`step`, `agent` name its place in the tree) that `run` runs under
   * the background signal — which ends with the agent, not with the tool call —; returns its id.
   */
  launchChild<P extends { ctx: RunContext }>(
    parent: P,
    place: { step: string; agent: string; task: string },
    run: (from: P) => Promise<AgentRunResult>,
  ): string {
    const id = childPath(parent.ctx.path, place.step, place.agent);
    this.launch(id, place.task, () => run({ ...parent, ctx: { ...parent.ctx, signal: this.signal } }));
    return id;
  }

  private launch(id: string, task: string, run: () => Promise<AgentRunResult>): void {
    this.registry.spawn(id, task);
    const promise = run().then((result) => {
      this.registry.complete(id, result);
      this.running.delete(id);
      return result;
    });
    this.running.set(id, promise);
  }

  /**
   * `task_output`: the child's result once it has one; else, blocking, waits up to `seconds` (or
   * until `signal` fires) for it.
   */
  async output(
    id: string,
    block: boolean,
    seconds: number,
    signal: AbortSignal,
  ): Promise<AgentRunResult | undefined> {
    const running = this.running.get(id);
    if (running && block) {
      const timed = withTimeout(signal, seconds * 1000);
      const stop = new Promise<void>((resolve) =>
        timed.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
      await Promise.race([running, stop]);
      timed.dispose();
    }
    return this.registry.read(id);
  }

  /** The reminder turn's text when children still run or have results nobody read; else undefined. */
  reminder(): string | undefined {
    const running = this.registry.pending().map((c) => `- ${c.id} (task: ${c.task}): still running`);
    const unread = this.registry
      .completed()
      .filter((c) => !c.read)
      .map((c) => `- ${c.id} (task: ${c.task}): ${c.result.status}, result not read`);
    const lines = [...running, ...unread];
    if (lines.length === 0) return undefined;
    return `Before you finish: background sub-agents you started have not been collected:\n${lines.join('\n')}\nRead their results with ${TASK_OUTPUT_TOOL_NAME}, or answer again; sub-agents still running after your next answer are cancelled.`;
  }

  /**
   * Ends the agent's background work: cancels every child still running, waits until each has
   * settled, and returns every child's outcome (for the tree) with the ids it had to stop (`reason`:
   * why; cancelled by default).
   */
  async finish(
    reason?: AxeError,
  ): Promise<{ results: AgentRunResult[]; cancelled: { id: string; task: string }[] }> {
    const cancelled = this.registry.pending();
    if (cancelled.length > 0) {
      this.controller.abort(
        reason ?? new CancelledError('cancelled: still running when its caller finished'),
      );
    }
    await Promise.all(this.running.values());
    // Each outcome is handed over once, however often the agent's end is reached.
    const results = this.finished ? [] : this.registry.completed().map((child) => child.result);
    this.finished = true;
    this.unfollow();
    return { results, cancelled };
  }
}

/** `task_output`: offered with `background = true`. */
export const TASK_OUTPUT_TOOL_SPEC: ToolSpec = {
  name: TASK_OUTPUT_TOOL_NAME,
  description:
    'Get the result of a sub-agent started with run_in_background: its outcome as JSON once it has finished, else {"status":"running"}. With block (the default) it waits for the sub-agent, up to timeout seconds.',
  parameters: {
    type: 'object',
    properties: {
      agent_id: { type: 'string', description: 'The agent_id returned when the sub-agent was started' },
      block: { type: 'boolean', description: 'Wait for the sub-agent to finish (default true)' },
      timeout: {
        type: 'integer',
        minimum: 0,
        description: `Most seconds to wait when blocking (default ${DEFAULT_WAIT_SECONDS})`,
      },
    },
    required: ['agent_id'],
  },
};

/** The handler of `task_output`; `render` turns an outcome into the tool result (call_agent's JSON). */
export function taskOutputHandler(
  background: BackgroundChildren,
  signal: AbortSignal,
  render: (result: AgentRunResult) => ExecutedCall['output'],
): ToolHandler {
  return async (call: ToolCall): Promise<ExecutedCall> => {
    const args: JsonObject = call.arguments;
    const id = args.agent_id;
    if (typeof id !== 'string' || !background.registry.has(id)) {
      return {
        output: toolFailure(
          `task_output error: no background sub-agent with agent_id ${JSON.stringify(id ?? null)}`,
        ),
      };
    }
    let block: boolean;
    let seconds: number;
    try {
      // As the schema says: a boolean and a whole number of seconds ("true", "12" read as such);
      // any other value is the model's mistake to hear about, never a wait of the default length.
      block = optionalBoolean(args, 'block', true);
      seconds = optionalInteger(args, 'timeout', DEFAULT_WAIT_SECONDS, 0);
    } catch (error) {
      return { output: toolFailure(`task_output error: ${(error as Error).message}`) };
    }
    const result = await background.output(id, block, seconds, signal);
    return {
      output: result
        ? render(result)
        : { content: JSON.stringify({ status: 'running', agent_id: id }), isError: false },
    };
  };
}

/**
 * No background child outlives its agent: those still running are cancelled (and said so on
 * stderr), every one is waited for, and all join the agent's children in the tree.
 */
export async function collectBackground(
  background: BackgroundChildren | undefined,
  spec: AgentSpec,
  ctx: RunContext,
  state: LoopState,
  budget?: BudgetError,
): Promise<void> {
  if (!background) return;
  // The budget that stopped the agent stops them too: they report `budget_exceeded`, as any
  // sub-agent the budget stops.
  const { results, cancelled } = await background.finish(budget);
  const how = budget ? `stopped: ${budget.message}` : 'finished: cancelled';
  for (const child of cancelled) {
    const message = `background sub-agent ${child.id} (task: ${child.task}) was still running when "${spec.name}" ${how}`;
    emitEvent(ctx, spec.name, { type: 'warning', message });
  }
  state.children.push(...results);
}
