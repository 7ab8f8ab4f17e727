import { isAbsolute, relative, resolve } from 'node:path';
import { fsPromises } from '../fs/promises.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue, Message, ToolCall, ToolSpec } from '../provider/types.js';
import type { ExecutedCall, ToolHandler } from '../runner/loop.js';
import { failureReason, toolFailure } from '../runner/result.js';
import type { AgentRunResult } from '../runner/types.js';
import { SPAWN_AGENTS_TOOL_NAME } from '../tools/types.js';
import {
  type CallOverrides,
  overrideArgs,
  overrideParameters,
  type ParentRun,
  startChild,
  withOverrides,
  workerSpec,
  workerTools,
} from './child.js';
import { callsBefore } from './child-context.js';
import { failedOutcome, outcomeFields } from './outcome.js';

/**
 * `spawn_agents` (`[sub_agents_config] spawn = true`): a list of tasks, each run by a worker — a
 * copy of the calling agent (its model, prompt, tools, MCP servers, workdir, sub-agents) with the
 * task's options applied as a call's overrides —, all at once under the run-wide limiter. Workers
 * never spawn (one level); their results come back in task order as one aggregate.
 */
export function spawnAgentsToolSpec(maxSpawn: number, background: boolean): ToolSpec {
  return {
    name: SPAWN_AGENTS_TOOL_NAME,
    description: `Spawn sub-agents to execute tasks in parallel. Each sub-agent is a copy of you with your tools, runs independently and returns a result. Use for: multiple perspectives on code review, exploring unfamiliar parts of a codebase, parallel research or analysis tasks, or divide-and-conquer problem solving. At most ${maxSpawn} tasks per call.`,
    parameters: {
      type: 'object',
      properties: {
        tasks: {
          type: 'array',
          minItems: 1,
          description: 'List of tasks to execute in parallel',
          items: {
            type: 'object',
            properties: {
              task: { type: 'string', description: 'Task description for the sub-agent' },
              cwd: {
                type: 'string',
                description: 'Working directory, inside yours (default: your working directory)',
              },
              ...overrideParameters('your', 'this task'),
              ...(background
                ? {
                    run_in_background: {
                      type: 'boolean',
                      description: 'Start this task and return at once; collect its result with task_output',
                    },
                  }
                : {}),
            },
            required: ['task'],
          },
        },
      },
      required: ['tasks'],
    },
  };
}

interface SpawnTask {
  task: string;
  cwd?: string;
  overrides: CallOverrides;
  background: boolean;
}

/** The handler of `spawn_agents` for one agent run; never throws. */
export function spawnAgentsHandler(parent: ParentRun): ToolHandler {
  // After those of the conversation it picks up: no agent_id in it is given again.
  let calls = callsBefore(parent.ctx, SPAWN_AGENTS_TOOL_NAME);
  return async (call: ToolCall, _turn: number, history: readonly Message[]): Promise<ExecutedCall> => {
    const tasks = await checkTasks(call.arguments, parent);
    if ('error' in tasks) return { output: toolFailure(tasks.error) };
    const callNumber = ++calls;
    const { background } = parent;
    const onlyTools = workerTools(parent);
    const outcomes = await Promise.all(
      tasks.map((task, index): Promise<AgentRunResult | { launched: string }> => {
        const step = `${SPAWN_AGENTS_TOOL_NAME}#${callNumber}.${index + 1}`;
        const run = (from: ParentRun) =>
          startChild(from, {
            agent: parent.spec.name,
            step,
            prepared: withOverrides(
              workerSpec(parent, task.cwd),
              task.overrides,
              parent.ctx.env,
              SPAWN_AGENTS_TOOL_NAME,
            ),
            task: task.task,
            message: task.task,
            inputs: { ...parent.ctx.inputs },
            overrides: task.overrides,
            history,
            callId: call.id,
            delegated: true,
            ...onlyTools,
            ...(task.background && background ? { background: true } : {}),
          });
        if (!task.background || !background) return run(parent);
        const place = { step, agent: parent.spec.name, task: task.task };
        return Promise.resolve({ launched: background.launchChild(parent, place, run) });
      }),
    );
    const aggregate = {
      sub_agent_results: outcomes.map((result, index) => ({
        status: 'launched' in result ? 'async_launched' : result.status,
        agent_id: 'launched' in result ? result.launched : result.path,
        task: tasks[index]?.task ?? '',
        outcome: 'launched' in result ? { async_launched: {} } : outcome(result),
        ...('launched' in result ? {} : outcomeFields(result)),
      })),
    };
    const children = outcomes.filter((r): r is AgentRunResult => !('launched' in r));
    const failed =
      children.length > 0 && children.length === outcomes.length && children.every(failedOutcome);
    return { output: { content: JSON.stringify(aggregate), isError: failed }, children };
  };
}

/**
 * A task's outcome as the tool reports it: the result, or the error with its kind (the run's
 * status); what a task that did not complete got done is beside it (`outcomeFields`).
 */
function outcome(result: AgentRunResult): JsonObject {
  if (result.status === 'completed') return { success: { result: result.output ?? result.content } };
  return { failure: { error: failureReason(result), error_kind: result.status } };
}

/** Every task checked before any starts: one bad task fails the call, with nothing run. */
async function checkTasks(args: JsonObject, parent: ParentRun): Promise<SpawnTask[] | { error: string }> {
  const fail = (message: string) => ({ error: `${SPAWN_AGENTS_TOOL_NAME} error: ${message}` });
  const { tasks } = args;
  if (!Array.isArray(tasks) || tasks.length === 0) return fail('"tasks" must be a non-empty list of tasks');
  const { maxSpawn } = parent.spec.subAgentsConfig;
  if (tasks.length > maxSpawn) return fail(`${tasks.length} tasks, more than max_spawn (${maxSpawn})`);
  const checked: SpawnTask[] = [];
  for (const [index, raw] of tasks.entries()) {
    const where = `tasks[${index}]`;
    if (!isObject(raw)) return fail(`${where} must be an object with a "task"`);
    const task: JsonValue | undefined = raw.task;
    if (typeof task !== 'string' || task.trim() === '') return fail(`${where}.task is required`);
    const overrides = overrideArgs(raw, `${SPAWN_AGENTS_TOOL_NAME} ${where}`);
    if ('error' in overrides) return overrides;
    const cwd = raw.cwd === undefined || raw.cwd === null || raw.cwd === '' ? undefined : raw.cwd;
    if (cwd !== undefined && typeof cwd !== 'string') return fail(`${where}.cwd must be a string`);
    const inside = cwd === undefined ? undefined : await insideWorkdir(parent.workdir, cwd);
    if (inside !== undefined && 'error' in inside) return fail(`${where}.cwd ${inside.error}`);
    const background = parent.background ? raw.run_in_background : undefined;
    if (background !== undefined && background !== null && typeof background !== 'boolean') {
      return fail(`${where}.run_in_background must be true or false`);
    }
    checked.push({
      task,
      overrides,
      background: background === true,
      ...(inside ? { cwd: inside.path } : {}),
    });
  }
  return checked;
}

/** `cwd`, relative to the workdir or absolute, as a real directory inside it (links resolved). */
async function insideWorkdir(workdir: string, cwd: string): Promise<{ path: string } | { error: string }> {
  let real: string;
  let root: string;
  try {
    [real, root] = await Promise.all([
      fsPromises().realpath(resolve(workdir, cwd)),
      fsPromises().realpath(workdir),
    ]);
  } catch {
    return { error: `"${cwd}" does not exist` };
  }
  const rel = relative(root, real);
  if (rel.startsWith('..') || isAbsolute(rel))
    return { error: `"${cwd}" is outside the working directory ${root}` };
  if (!(await fsPromises().stat(real)).isDirectory()) return { error: `"${cwd}" is not a directory` };
  return { path: real };
}
