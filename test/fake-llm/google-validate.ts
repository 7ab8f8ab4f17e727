import { camel, field, invalid, unknownKey } from './google-fields.js';
import { validateTools } from './google-validate-tools.js';
import { isRecord } from './json.js';
import type { IncomingRequest, Refusal } from './wire.js';

/**
 * Validation of Gemini generateContent / streamGenerateContent. Field names are accepted in
 * camelCase and snake_case, as the real (proto JSON) endpoint does; messages follow its wording.
 */
const TOP_LEVEL = [
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'generationConfig',
  'safetySettings',
  'cachedContent',
  'labels',
];
const PART_DATA = [
  'text',
  'inlineData',
  'functionCall',
  'functionResponse',
  'fileData',
  'executableCode',
  'codeExecutionResult',
];
const PART_META = ['thought', 'thoughtSignature', 'videoMetadata', 'partMetadata'];
export function validateGoogle(request: IncomingRequest): Refusal | undefined {
  if (!request.headers['x-goog-api-key'] && !request.query.key) {
    return {
      status: 403,
      message:
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    };
  }
  if (request.path.includes(':streamGenerateContent') && request.query.alt !== 'sse') {
    return invalid('fake-llm: streamGenerateContent without alt=sse (a JSON array stream) is not supported');
  }
  const body = request.body;
  if (!isRecord(body)) return invalid('Invalid JSON payload received. Unexpected token.');
  return (
    unknownKey(body, TOP_LEVEL, '') ??
    validateSystemInstruction(field(body, 'systemInstruction')) ??
    validateTools(field(body, 'tools')) ??
    validateContents(field(body, 'contents')) ??
    validateToolsWithJson(request.path, body)
  );
}

/** Gemini models before 3 refuse function declarations together with a JSON response. */
function validateToolsWithJson(path: string, body: Record<string, unknown>): Refusal | undefined {
  const tools = field(body, 'tools');
  const config = field(body, 'generationConfig');
  if (!Array.isArray(tools) || tools.length === 0 || !isRecord(config)) return undefined;
  if (field(config, 'responseMimeType') !== 'application/json') return undefined;
  const major = /\/models\/gemini-(\d+)(?:\.\d+)?-[^/:]*:/.exec(decodeURIComponent(path))?.[1];
  if (major === undefined || Number(major) >= 3) return undefined;
  return invalid("Function calling with a response mime type: 'application/json' is unsupported");
}

function validateSystemInstruction(value: unknown): Refusal | undefined {
  if (value === undefined) return undefined;
  if (!isRecord(value)) {
    return invalid(
      `Invalid value at 'system_instruction' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content), ${JSON.stringify(value)}`,
    );
  }
  const unknown = unknownKey(value, ['role', 'parts'], 'system_instruction');
  if (unknown) return unknown;
  const parts = field(value, 'parts');
  if (!Array.isArray(parts) || parts.length === 0) {
    return invalid('* GenerateContentRequest.system_instruction.parts: contents.parts must not be empty.');
  }
  for (const [i, part] of parts.entries()) {
    if (!isRecord(part) || typeof part.text !== 'string') {
      return invalid(
        `* GenerateContentRequest.system_instruction.parts[${i}].text: system instruction parts must be text.`,
      );
    }
  }
  return undefined;
}

type TurnKind = 'text' | 'call' | 'response';

function validateContents(contents: unknown): Refusal | undefined {
  if (!Array.isArray(contents) || contents.length === 0) {
    return invalid('* GenerateContentRequest.contents: contents is not specified');
  }
  const kinds: { role: string; kind: TurnKind; count: number }[] = [];
  for (const [i, content] of contents.entries()) {
    const at = `contents[${i}]`;
    if (!isRecord(content))
      return invalid(
        `Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Content)`,
      );
    const unknown = unknownKey(content, ['role', 'parts'], at);
    if (unknown) return unknown;
    const role = content.role ?? 'user';
    if (role !== 'user' && role !== 'model') return invalid('Please use a valid role: user, model.');
    const parts = content.parts;
    if (!Array.isArray(parts) || parts.length === 0) {
      return invalid(`* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`);
    }
    let calls = 0;
    let responses = 0;
    for (const [j, part] of parts.entries()) {
      const refusal = validatePart(part, role, `${at}.parts[${j}]`);
      if (refusal) return refusal;
      if (isRecord(part) && field(part, 'functionCall') !== undefined) calls++;
      if (isRecord(part) && field(part, 'functionResponse') !== undefined) responses++;
    }
    kinds.push({
      role,
      kind: calls > 0 ? 'call' : responses > 0 ? 'response' : 'text',
      count: calls || responses,
    });
  }
  return validateTurnOrder(kinds);
}

function validatePart(part: unknown, role: string, at: string): Refusal | undefined {
  if (!isRecord(part))
    return invalid(`Invalid value at '${at}' (type.googleapis.com/google.ai.generativelanguage.v1beta.Part)`);
  const unknown = unknownKey(part, [...PART_DATA, ...PART_META], at);
  if (unknown) return unknown;
  const data = Object.keys(part).filter((k) => PART_DATA.includes(camel(k)));
  if (data.length !== 1) {
    return invalid(
      `* GenerateContentRequest.${at}.data: required oneof field 'data' must have ${data.length === 0 ? 'one initialized field' : 'only one initialized field'}`,
    );
  }
  if (part.text !== undefined && typeof part.text !== 'string')
    return invalid(`Invalid value at '${at}.text' (TYPE_STRING), ${JSON.stringify(part.text)}`);
  const call = field(part, 'functionCall');
  if (call !== undefined) {
    if (role !== 'model')
      return invalid(
        `* GenerateContentRequest.${at}.function_call: function calls are only allowed in model turns.`,
      );
    if (!isRecord(call) || typeof call.name !== 'string' || call.name === '')
      return invalid(`* GenerateContentRequest.${at}.function_call.name: name is required.`);
    if (call.args !== undefined && !isRecord(call.args))
      return invalid(
        `Invalid value at '${at}.function_call.args' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(call.args)}`,
      );
  }
  const response = field(part, 'functionResponse');
  if (response !== undefined) {
    if (role !== 'user')
      return invalid(
        `* GenerateContentRequest.${at}.function_response: function responses are only allowed in user turns.`,
      );
    if (!isRecord(response) || typeof response.name !== 'string' || response.name === '')
      return invalid(`* GenerateContentRequest.${at}.function_response.name: name is required.`);
    if (!isRecord(response.response))
      return invalid(
        `Invalid value at '${at}.function_response.response' (type.googleapis.com/google.protobuf.Struct), ${JSON.stringify(response.response ?? null)}`,
      );
  }
  return undefined;
}

function validateTurnOrder(turns: { role: string; kind: TurnKind; count: number }[]): Refusal | undefined {
  for (const [i, turn] of turns.entries()) {
    const previous = turns[i - 1];
    if (turn.kind === 'call' && previous !== undefined && previous.role !== 'user') {
      return invalid(
        'Please ensure that function call turn comes immediately after a user turn or after a function response turn.',
      );
    }
    if (turn.kind === 'response') {
      if (previous?.kind !== 'call')
        return invalid(
          'Please ensure that function response turn comes immediately after a function call turn.',
        );
      if (previous.count !== turn.count) {
        return invalid(
          'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
        );
      }
    }
    const next = turns[i + 1];
    if (turn.kind === 'call' && next !== undefined && next.kind !== 'response') {
      return invalid(
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      );
    }
  }
  return undefined;
}
