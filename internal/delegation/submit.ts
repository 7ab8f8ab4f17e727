import { describeViolations, type OutputCheck, outputCheck } from '../agent/output-schema.js';
import type { OutputSpec } from '../agent/spec.js';
import type { JsonObject, ToolCall, ToolSpec } from '../provider/types.js';
import type { ExecutedCall, ToolHandler } from '../runner/loop.js';
import { toolFailure } from '../runner/result.js';
import type { TerminalTools } from '../runner/terminal.js';

/**
 * The terminal tools of an agent with `[output]`: `submit_result` ends it with a value checked
 * against the schema, `submit_error` ends it as failed. Nothing else ends such an agent.
 */
export const SUBMIT_RESULT = 'submit_result';
const SUBMIT_ERROR = 'submit_error';

/** The user turn that asks an agent that answered in plain text to submit instead. */
const SUBMIT_REMINDER =
  'You have not submitted a result. Call submit_result now with your final result, or submit_error if you cannot complete the task. Do not answer in plain text.';

/** How the loop knows both: by name, and the reminder for an agent that answered in plain text. */
export const SUBMIT_TOOLS: TerminalTools = {
  names: new Set([SUBMIT_RESULT, SUBMIT_ERROR]),
  reminder: SUBMIT_REMINDER,
};

/** The output of an agent offered the terminal tools without `[output]`: a string named `result`. */
export const FREE_TEXT_OUTPUT: OutputSpec = { name: 'result', description: '' };

export function submitToolSpecs(output: OutputSpec): ToolSpec[] {
  const value: JsonObject = output.schema
    ? { ...output.schema, ...(output.description !== '' ? { description: output.description } : {}) }
    : { type: 'string', description: output.description || 'Your final result' };
  return [
    {
      name: SUBMIT_RESULT,
      description:
        'Submit your final result. This ends your work: call it once, when you are done, instead of answering in plain text. A result that does not match the schema is refused with the reasons, and you may correct it and call again.',
      parameters: {
        type: 'object',
        properties: { [output.name]: value },
        required: [output.name],
      },
    },
    {
      name: SUBMIT_ERROR,
      description: 'Report that you cannot complete the task, and why. This ends your work.',
      parameters: {
        type: 'object',
        properties: { error: { type: 'string', description: 'Why the task cannot be completed' } },
        required: ['error'],
      },
    },
  ];
}

/** The handlers of both tools; the schema is compiled (and ajv loaded) here, once per agent run. */
export async function submitHandlers(output: OutputSpec): Promise<Map<string, ToolHandler>> {
  const check: OutputCheck = output.schema
    ? await outputCheck(output.schema)
    : (value) =>
        typeof value === 'string' ? [] : [{ path: '', expected: 'string', got: JSON.stringify(value) }];
  const result = async (call: ToolCall): Promise<ExecutedCall> => {
    const value = call.arguments[output.name];
    if (value === undefined) {
      return { output: toolFailure(`submit_result needs "${output.name}": nothing was submitted`) };
    }
    const violations = check(value);
    if (violations.length > 0) {
      const reasons = describeViolations(violations.map((v) => ({ ...v, path: `/${output.name}${v.path}` })));
      return {
        output: toolFailure(
          `The result does not match the schema; correct it and call submit_result again:\n${reasons}`,
        ),
      };
    }
    return { output: { content: 'Result submitted.', isError: false }, submission: { value } };
  };
  const error = async (call: ToolCall): Promise<ExecutedCall> => {
    const message = call.arguments.error;
    if (typeof message !== 'string' || message.trim() === '') {
      return { output: toolFailure('submit_error needs "error": a string saying why') };
    }
    return { output: { content: 'Error submitted.', isError: false }, submission: { error: message } };
  };
  return new Map([
    [SUBMIT_RESULT, result],
    [SUBMIT_ERROR, error],
  ]);
}
