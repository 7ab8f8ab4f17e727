import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue, Message, ToolCall, ToolSpec } from '../provider/types.js';
import type { ExecutedCall, ToolHandler } from '../runner/loop.js';
import { toolFailure } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';
import { DELEGATE_TASK_TOOL_NAME } from '../tools/types.js';
import { subAgentUserMessage } from './call-agent.js';
import {
  type CallOverrides,
  loadSpec,
  type ParentRun,
  startChild,
  withOverrides,
  workerSpec,
  workerTools,
} from './child.js';
import { callsBefore } from './child-context.js';
import { failedOutcome, outcomeText } from './outcome.js';

/**
 * `delegate_task` (`[sub_agents_config] delegate = true`: an orchestrator's plan run as a graph): a
 * plan of sub-tasks, each by a named sub-agent or a worker (a copy of the caller), with
 * dependencies. Checked whole before anything runs; then every sub-task starts as soon as its
 * prerequisites have completed, with their results in its message; one whose prerequisite failed
 * is skipped, independent branches go on. `mode: "sequential"` is the chain where each sub-task
 * depends on all before it. The result is one report, in sub-task order.
 */
export function delegateTaskToolSpec(subAgents: readonly string[], maxSubtasks: number): ToolSpec {
  const named: JsonObject =
    subAgents.length > 0
      ? {
          agent: {
            type: 'string',
            description: `Sub-agent to run it (one of: ${subAgents.join(', ')}); default: a copy of you`,
          },
        }
      : {};
  return {
    name: DELEGATE_TASK_TOOL_NAME,
    description: `Break a complex task into sub-tasks and run them as a plan. Sub-tasks whose prerequisites are done run in parallel; each receives the results of the sub-tasks it depends on; one whose prerequisite failed is skipped. Results come back as one report. Use for multi-step investigations or work with ordered steps. At most ${maxSubtasks} sub-tasks.`,
    parameters: {
      type: 'object',
      properties: {
        plan: { type: 'string', description: 'High-level description of the overall goal' },
        mode: {
          type: 'string',
          enum: ['graph', 'sequential'],
          description:
            'graph (default): by depends_on, independent sub-tasks in parallel. sequential: one after another in order, each receiving the results of all before it, stopping at the first that does not complete (the rest are skipped); no depends_on',
        },
        subtasks: {
          type: 'array',
          minItems: 1,
          description: 'The sub-tasks, referred to by their 0-based index',
          items: {
            type: 'object',
            properties: {
              task: { type: 'string', description: 'Task description' },
              scope: { type: 'string', description: 'Focus directory or file' },
              ...named,
              max_tool_calls: {
                type: 'integer',
                minimum: 1,
                description: 'Most tool calls for this sub-task (default: its own limit, else 15)',
              },
              depends_on: {
                type: 'array',
                items: { type: 'integer', minimum: 0 },
                description: 'Indices of the sub-tasks that must complete first (0-based)',
              },
            },
            required: ['task'],
          },
        },
      },
      required: ['plan', 'subtasks'],
    },
  };
}

interface Subtask {
  task: string;
  scope?: string;
  agent?: string;
  dependsOn: number[];
  overrides: CallOverrides;
}

/** A sub-task's outcome: its run, or the sub-task whose failure skipped it. */
type Outcome = { result: AgentRunResult } | { skipped: number };

function skipReason(failed: number): string {
  return `sub-task ${failed} did not complete`;
}

/** The handler of `delegate_task` for one agent run; never throws. */
export function delegateTaskHandler(parent: ParentRun): ToolHandler {
  // After those of the conversation it picks up: no agent_id in it is given again.
  let calls = callsBefore(parent.ctx, DELEGATE_TASK_TOOL_NAME);
  return async (call: ToolCall, _turn: number, history: readonly Message[]): Promise<ExecutedCall> => {
    const plan = checkPlan(call.arguments, parent);
    if ('error' in plan) return { output: toolFailure(plan.error) };
    const callNumber = ++calls;
    const workerOnly = workerTools(parent);
    const outcomes: Promise<Outcome>[] = [];
    const run = async (subtask: Subtask, index: number): Promise<Outcome> => {
      const before = await Promise.all(subtask.dependsOn.map((j) => outcomes[j] as Promise<Outcome>));
      const failed = before.findIndex((o) => !('result' in o) || o.result.status !== 'completed');
      if (failed >= 0) return { skipped: subtask.dependsOn[failed] as number };
      const loaded = subtask.agent
        ? await loadSpec(subtask.agent, parent.ctx, DELEGATE_TASK_TOOL_NAME)
        : { spec: workerSpec(parent) };
      const prepared =
        'spec' in loaded ? withOverrides(loaded.spec, {}, parent.ctx.env, DELEGATE_TASK_TOOL_NAME) : loaded;
      const result = await startChild(parent, {
        agent: subtask.agent ?? parent.spec.name,
        step: `${DELEGATE_TASK_TOOL_NAME}#${callNumber}.${index}`,
        prepared,
        task: subtask.task,
        message: subAgentUserMessage(subtask.task, context(subtask, before, plan.subtasks)),
        inputs: subtask.agent ? {} : { ...parent.ctx.inputs },
        overrides: subtask.overrides,
        history,
        callId: call.id,
        delegated: true,
        ...(subtask.agent ? {} : workerOnly),
      });
      return { result };
    };
    // Every sub-task's promise exists before any awaits another's (dependencies point anywhere).
    plan.subtasks.forEach((subtask, index) => {
      outcomes[index] = Promise.resolve().then(() => run(subtask, index));
    });
    const settled = await Promise.all(outcomes);
    const children = settled.flatMap((o) => ('result' in o ? [o.result] : []));
    return {
      output: {
        content: report(plan.plan, plan.subtasks, settled),
        isError: children.every(failedOutcome),
      },
      children,
    };
  };
}

/** What a sub-task reads besides its task: its scope and its prerequisites' results. */
function context(subtask: Subtask, before: Outcome[], all: Subtask[]): string | undefined {
  const parts = subtask.scope ? [`Scope: ${subtask.scope}`] : [];
  before.forEach((outcome, k) => {
    const j = subtask.dependsOn[k] as number;
    if ('result' in outcome)
      parts.push(`Result of sub-task ${j} (${all[j]?.task}):\n${outcome.result.content}`);
  });
  return parts.length > 0 ? parts.join('\n\n') : undefined;
}

/**
 * `Status: …` of the whole plan, `Plan: …`, then each sub-task with its outcome (status first;
 * counts, files and partial work when it did not complete) or why it did not run, in order.
 */
function report(plan: string, subtasks: Subtask[], outcomes: Outcome[]): string {
  const sections = outcomes.map((outcome, i) => {
    const head = `## Sub-task ${i}: ${subtasks[i]?.task}`;
    if (!('result' in outcome)) return `${head}\nStatus: skipped (${skipReason(outcome.skipped)})`;
    return `${head}\n${outcomeText(outcome.result)}`;
  });
  return [planStatus(outcomes), `Plan: ${plan}`, ...sections].join('\n\n');
}

/** `Status: 2 of 3 sub-tasks completed (1 budget_exceeded)`: the plan's outcome in one line. */
function planStatus(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const status = 'result' in outcome ? outcome.result.status : 'skipped';
    counts.set(status, (counts.get(status) ?? 0) + 1);
  }
  const completed = counts.get('completed') ?? 0;
  counts.delete('completed');
  const others = [...counts].map(([status, n]) => `${n} ${status}`).join(', ');
  const line = `Status: ${completed} of ${outcomes.length} sub-tasks completed`;
  return others === '' ? line : `${line} (${others})`;
}

/** The whole plan checked before any sub-task runs: one error fails the call, with nothing run. */
function checkPlan(
  args: JsonObject,
  parent: ParentRun,
): { plan: string; subtasks: Subtask[] } | { error: string } {
  const fail = (message: string) => ({ error: `${DELEGATE_TASK_TOOL_NAME} error: ${message}` });
  const { plan, subtasks } = args;
  if (typeof plan !== 'string' || plan.trim() === '') return fail('"plan" is required');
  const mode = args.mode === undefined || args.mode === null || args.mode === '' ? 'graph' : args.mode;
  if (mode !== 'graph' && mode !== 'sequential') return fail('"mode" must be "graph" or "sequential"');
  if (!Array.isArray(subtasks) || subtasks.length === 0) return fail('"subtasks" must be a non-empty list');
  const { maxSubtasks } = parent.spec.subAgentsConfig;
  if (subtasks.length > maxSubtasks)
    return fail(`${subtasks.length} sub-tasks, more than max_subtasks (${maxSubtasks})`);
  const checked: Subtask[] = [];
  for (const [index, raw] of subtasks.entries()) {
    const where = `subtasks[${index}]`;
    if (!isObject(raw)) return fail(`${where} must be an object with a "task"`);
    const { task, scope, agent } = raw;
    if (typeof task !== 'string' || task.trim() === '') return fail(`${where}.task is required`);
    if (scope !== undefined && scope !== null && typeof scope !== 'string')
      return fail(`${where}.scope must be a string`);
    const most = raw.max_tool_calls ?? undefined;
    if (most !== undefined && (typeof most !== 'number' || !Number.isInteger(most) || most < 1))
      return fail(`${where}.max_tool_calls must be a whole number of at least 1`);
    const limit: CallOverrides = most === undefined ? {} : { maxToolCalls: most };
    const named = agent === undefined || agent === null || agent === '' ? undefined : agent;
    if (named !== undefined && (typeof named !== 'string' || !parent.spec.subAgents.includes(named))) {
      return fail(`${where}.agent ${JSON.stringify(named)} is not in this agent's sub_agents list`);
    }
    if (mode === 'sequential' && raw.depends_on !== undefined && raw.depends_on !== null) {
      return fail(`${where}.depends_on is for mode "graph": sequential sub-tasks run in their order`);
    }
    // Sequential: each depends on every sub-task before it — runs after them, reads their
    // results, and is skipped once one of them did not complete.
    const dependsOn = mode === 'sequential' ? [...Array(index).keys()] : indices(raw.depends_on);
    if (dependsOn === undefined)
      return fail(`${where}.depends_on must be a sub-task index or a list of them`);
    const bad = dependsOn.find((j) => j >= subtasks.length || j === index);
    if (bad !== undefined)
      return fail(
        `${where}.depends_on: ${bad} is not another sub-task's index (0 to ${subtasks.length - 1})`,
      );
    checked.push({
      task,
      ...(typeof scope === 'string' && scope !== '' ? { scope } : {}),
      ...(named !== undefined ? { agent: named } : {}),
      dependsOn,
      overrides: limit,
    });
  }
  const cycle = findCycle(checked);
  if (cycle) return fail(`the sub-tasks depend on each other in a cycle: ${cycleText(cycle)}`);
  return { plan, subtasks: checked };
}

/** A long cycle by its ends, so the error stays readable (and small) for a chain of thousands. */
function cycleText(cycle: number[]): string {
  const shown = cycle.length <= 12 ? cycle : [...cycle.slice(0, 5), '…', ...cycle.slice(-3)];
  const text = shown.join(' → ');
  return cycle.length <= 12 ? text : `${text} (${cycle.length - 1} sub-tasks)`;
}

function indices(value: JsonValue | undefined): number[] | undefined {
  if (value === undefined || value === null) return [];
  const list = Array.isArray(value) ? value : [value];
  if (!list.every((j) => typeof j === 'number' && Number.isInteger(j) && j >= 0)) return undefined;
  return [...new Set(list as number[])];
}

/**
 * A dependency cycle as the indices along it (first repeated at the end), or undefined. A
 * depth-first walk with its own stack, not recursion: a plan may chain thousands of sub-tasks.
 */
function findCycle(subtasks: Subtask[]): number[] | undefined {
  const state = new Map<number, 'visiting' | 'done'>();
  for (let root = 0; root < subtasks.length; root++) {
    if (state.has(root)) continue;
    // The path from `root`, each with how many of its dependencies have been walked.
    const path: number[] = [root];
    const next: number[] = [0];
    state.set(root, 'visiting');
    while (path.length > 0) {
      const top = path.length - 1;
      const i = path[top] as number;
      const dependsOn = subtasks[i]?.dependsOn ?? [];
      const k = next[top] as number;
      if (k === dependsOn.length) {
        state.set(i, 'done');
        path.pop();
        next.pop();
        continue;
      }
      next[top] = k + 1;
      const j = dependsOn[k] as number;
      const seen = state.get(j);
      if (seen === 'visiting') return [...path.slice(path.indexOf(j)), j];
      if (seen === undefined) {
        state.set(j, 'visiting');
        path.push(j);
        next.push(0);
      }
    }
  }
  return undefined;
}
