import { isRecord } from './json.js';
import { checkResponsesSchema } from './openai-schema.js';
import type { IncomingRequest, Refusal } from './wire.js';

/**
 * Validation of POST /v1/responses: auth, the official `CreateResponse` schema (unknown top-level
 * keys refused), then the pairing the API enforces on stateless input — every
 * `function_call_output` answers an earlier `function_call`, and every `function_call` is answered.
 */
export function validateResponses(request: IncomingRequest): Refusal | undefined {
  const auth = request.headers.authorization ?? '';
  if (!/^Bearer \S+/.test(auth)) {
    return {
      status: 401,
      message:
        "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    };
  }
  const body = request.body;
  if (!isRecord(body)) {
    return { status: 400, message: 'We could not parse the JSON body of your request.' };
  }
  const schema = checkResponsesSchema(body);
  if (schema) return schema;
  if (Array.isArray(body.tools) && body.tools.length === 0) {
    return { status: 400, message: "Invalid 'tools': empty array.", param: 'tools', code: 'empty_array' };
  }
  return typeof body.input === 'string' ? undefined : validatePairing(body.input as unknown[]);
}

function validatePairing(input: unknown[]): Refusal | undefined {
  const called = new Set<string>();
  const answered = new Set<string>();
  for (const item of input.filter(isRecord)) {
    const id = String(item.call_id);
    if (item.type === 'function_call') called.add(id);
    if (item.type === 'function_call_output') {
      if (!called.has(id)) {
        return {
          status: 400,
          message: `No tool call found for function call output with call_id ${id}.`,
          param: 'input',
        };
      }
      answered.add(id);
    }
  }
  const open = [...called].find((id) => !answered.has(id));
  if (open !== undefined) {
    return { status: 400, message: `No tool output found for function call ${open}.`, param: 'input' };
  }
  return undefined;
}
