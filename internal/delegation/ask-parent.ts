import type { AgentSpec } from '../agent/spec.js';
import type { ToolCall, ToolSpec } from '../provider/types.js';
import { emitEvent, type RunContext } from '../runner/context.js';
import type { ExecutedCall, LoopSetup, ToolHandler } from '../runner/loop.js';
import type { AskParent } from '../runner/questions.js';
import { toolFailure } from '../runner/result.js';
import { ASK_PARENT_TOOL_NAME } from '../tools/types.js';
import type { ParentRun } from './child.js';
import { sideAnswer } from './side-answer.js';

export const ASK_PARENT_TOOL_SPEC: ToolSpec = {
  name: ASK_PARENT_TOOL_NAME,
  description:
    'Ask the agent that gave you this task a question, instead of guessing, when something you need is unclear. It answers briefly from what it knows. Use it sparingly.',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', description: 'Your question, self-contained' } },
    required: ['question'],
  },
};

/** The sub-agent's `ask_parent`: at most `maxQuestions` questions per call. */
export function askParentHandler(
  parent: AskParent,
  run: { signal: AbortSignal; deadline: number | undefined },
): ToolHandler {
  let asked = 0;
  return async (call: ToolCall): Promise<ExecutedCall> => {
    const { question } = call.arguments;
    if (typeof question !== 'string' || question.trim() === '') {
      return { output: toolFailure('ask_parent error: "question" argument is required') };
    }
    if (asked >= parent.maxQuestions) {
      return {
        output: toolFailure(
          `ask_parent error: you have asked ${asked} questions, the most allowed: go on with what you know`,
        ),
      };
    }
    asked++;
    return { output: { content: await parent.ask(question, run.signal, run.deadline), isError: false } };
  };
}

/**
 * How this agent answers its children's `ask_parent` (`ask_parent = true`): a side request to its
 * model — children ask during the loop, when its setup is in place —, or at the top level with
 * `--interactive`, the person.
 */
export function parentAnswerer(
  spec: AgentSpec,
  ctx: RunContext,
  setup: () => LoopSetup | undefined,
): ParentRun['ask'] {
  if (!spec.subAgentsConfig.askParent) return undefined;
  const { askPerson } = ctx;
  const answer: NonNullable<ParentRun['ask']> =
    ctx.depth === 0 && askPerson
      ? (agent, _history, question, signal) => askPerson(agent, question, signal)
      : (agent, history, question, signal, deadline) =>
          sideAnswer(
            setup() as LoopSetup,
            history,
            `Your sub-agent "${agent}" asks: ${question}. Answer briefly from what you know; you cannot use tools now.`,
            signal,
            deadline,
          );
  return async (agent, history, question, signal, deadline) => {
    const said = await answer(agent, history, question, signal, deadline);
    emitEvent(ctx, spec.name, { type: 'question', from: agent, question, answer: said });
    return said;
  };
}
