import { isRecord } from './json.js';
import { checkOpenAiSchema } from './openai-schema.js';
import type { IncomingRequest, Refusal } from './wire.js';

/** Validation of POST /v1/chat/completions: auth, the official schema, then the tool-message ordering rules. */
const MISSING_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.";
const NOT_JSON =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.";

export function validateOpenAi(request: IncomingRequest): Refusal | undefined {
  const auth = request.headers.authorization ?? '';
  if (!/^Bearer \S+/.test(auth)) return { status: 401, message: MISSING_KEY };
  const body = request.body;
  if (!isRecord(body)) return { status: 400, message: NOT_JSON };
  const schema = checkOpenAiSchema(body);
  if (schema) return schema;
  if (Array.isArray(body.tools) && body.tools.length === 0) {
    return {
      status: 400,
      message:
        "Invalid 'tools': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: 'tools',
      code: 'empty_array',
    };
  }
  for (const key of ['tool_choice', 'parallel_tool_calls']) {
    if (body[key] !== undefined && body[key] !== null && body.tools === undefined) {
      return {
        status: 400,
        message: `Invalid value for '${key}': '${key}' is only allowed when 'tools' are specified.`,
        param: key,
        code: 'invalid_value',
      };
    }
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    return {
      status: 400,
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      param: 'stream_options',
      code: 'invalid_value',
    };
  }
  return validateToolOrdering(body.messages as unknown[]) ?? validateDeepSeekReasoning(body);
}

/**
 * DeepSeek's thinking mode (`deepseek-reasoner`): an assistant turn that called tools must carry
 * the `reasoning_content` it came with, or the next request of the tool loop is a 400.
 */
function validateDeepSeekReasoning(body: Record<string, unknown>): Refusal | undefined {
  if (body.model !== 'deepseek-reasoner') return undefined;
  for (const [i, message] of (body.messages as unknown[]).entries()) {
    if (!isRecord(message) || message.role !== 'assistant' || !Array.isArray(message.tool_calls)) continue;
    if (typeof message.reasoning_content !== 'string') {
      return {
        status: 400,
        message: `Missing \`reasoning_content\` field in the assistant message at message index ${i}. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls`,
        code: 'invalid_request_error',
      };
    }
  }
  return undefined;
}

function unanswered(assistantIndex: number, ids: Set<string>): Refusal {
  return {
    status: 400,
    message: `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...ids].join(', ')}`,
    param: `messages.[${assistantIndex}].role`,
  };
}

/**
 * Every `tool` message answers a call of the assistant message just before the run of tool
 * messages, and every call is answered before the next non-tool message.
 */
function validateToolOrdering(messages: unknown[]): Refusal | undefined {
  let pending = new Set<string>();
  let open: { index: number; ids: Set<string> } | undefined;
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message)) continue;
    if (message.role === 'tool') {
      const id = String(message.tool_call_id);
      if (!open?.ids.has(id)) {
        return {
          status: 400,
          message:
            "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          param: `messages.[${i}].role`,
        };
      }
      pending.delete(id);
      continue;
    }
    if (open && pending.size > 0) return unanswered(open.index, pending);
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
    open =
      message.role === 'assistant' && calls.length > 0
        ? { index: i, ids: new Set(calls.map((c) => String(c.id))) }
        : undefined;
    pending = new Set(open?.ids ?? []);
  }
  if (open && pending.size > 0) return unanswered(open.index, pending);
  return undefined;
}
