import { validateOutputConfig } from './anthropic-output.js';
import { isRecord, type JsonRecord } from './json.js';
import type { IncomingRequest, Refusal } from './wire.js';

/** Validation of POST /v1/messages as strict as the real Messages API; messages follow its wording. */
const TOP_LEVEL_KEYS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'container',
  'mcp_servers',
  'context_management',
  'output_format',
  'output_config',
]);
const BLOCK_TYPES = [
  'text',
  'image',
  'document',
  'search_result',
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'web_search_tool_result',
];
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

function invalid(message: string): Refusal {
  return { status: 400, message };
}

export function validateAnthropic(request: IncomingRequest): Refusal | undefined {
  if (!request.headers['x-api-key']) return { status: 401, message: 'x-api-key header is required' };
  if (!request.headers['anthropic-version']) return invalid('anthropic-version: header is required');
  const body = request.body;
  if (!isRecord(body))
    return invalid('There was an issue with the format of your request: body must be a JSON object');
  for (const key of Object.keys(body)) {
    if (!TOP_LEVEL_KEYS.has(key)) return invalid(`${key}: Extra inputs are not permitted`);
  }
  if (body.model === undefined) return invalid('model: Field required');
  if (typeof body.model !== 'string' || body.model === '')
    return invalid('model: Input should be a valid string');
  if (body.max_tokens === undefined) return invalid('max_tokens: Field required');
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) {
    return invalid('max_tokens: Input should be a valid integer greater than or equal to 1');
  }
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    return invalid('stream: Input should be a valid boolean');
  }
  if (body.temperature !== undefined) {
    const t = body.temperature;
    if (typeof t !== 'number' || t < 0 || t > 1)
      return invalid('temperature: Input should be between 0 and 1');
  }
  if (body.tool_choice !== undefined && body.tools === undefined) {
    return invalid('tool_choice may only be specified while providing tools.');
  }
  if (body.tools === undefined && usesToolBlocks(body.messages)) {
    return invalid('Requests which include `tool_use` or `tool_result` blocks must define tools.');
  }
  return (
    validateSystem(body.system) ??
    validateTools(body.tools) ??
    validateMessages(body.messages) ??
    validateThinking(body) ??
    validateOutputConfig(body.output_config)
  );
}

function usesToolBlocks(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false;
  return messages.some(
    (message) =>
      isRecord(message) &&
      Array.isArray(message.content) &&
      message.content.some(
        (block) => isRecord(block) && (block.type === 'tool_use' || block.type === 'tool_result'),
      ),
  );
}

/**
 * Extended thinking: a budget of at least 1024 below max_tokens, no temperature but 1, and — the
 * rule that breaks clients that drop thinking — every assistant turn that called tools must
 * start with its thinking block (with the signature it came with).
 */
function validateThinking(body: JsonRecord): Refusal | undefined {
  const thinking = body.thinking;
  if (thinking === undefined || (isRecord(thinking) && thinking.type === 'disabled')) return undefined;
  if (!isRecord(thinking) || thinking.type !== 'enabled' || !Number.isInteger(thinking.budget_tokens)) {
    return invalid('thinking: Input should be a valid dictionary with type "enabled" and budget_tokens');
  }
  const budget = thinking.budget_tokens as number;
  if (budget < 1024)
    return invalid('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
  if (budget >= (body.max_tokens as number)) {
    return invalid('`max_tokens` must be greater than `thinking.budget_tokens`.');
  }
  if (body.temperature !== undefined && body.temperature !== 1) {
    return invalid('`temperature` may only be set to 1 when thinking is enabled.');
  }
  for (const [i, message] of (body.messages as unknown[]).entries()) {
    const blocks = blocksOf(message);
    if (!isRecord(message) || message.role !== 'assistant' || !blocks.some((b) => b.type === 'tool_use'))
      continue;
    const first = blocks[0];
    if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
      return invalid(
        `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks).`,
      );
    }
    if (first.type === 'thinking' && (typeof first.signature !== 'string' || first.signature === '')) {
      return invalid(`messages.${i}.content.0.thinking.signature: Field required`);
    }
  }
  return undefined;
}

function validateCacheControl(value: unknown, at: string): Refusal | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value) || value.type !== 'ephemeral')
    return invalid(`${at}.cache_control.type: Input should be 'ephemeral'`);
  if (value.ttl !== undefined && value.ttl !== '5m' && value.ttl !== '1h') {
    return invalid(`${at}.cache_control.ttl: Input should be '5m' or '1h'`);
  }
  return undefined;
}

function validateTextBlock(block: JsonRecord, at: string): Refusal | undefined {
  if (typeof block.text !== 'string') return invalid(`${at}.text: Field required`);
  if (block.text === '') return invalid('messages: text content blocks must be non-empty');
  if (block.text.trim() === '')
    return invalid('messages: text content blocks must contain non-whitespace text');
  return validateCacheControl(block.cache_control, at);
}

function validateSystem(system: unknown): Refusal | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system))
    return invalid('system: Input should be a valid string or a list of text blocks');
  for (const [i, block] of system.entries()) {
    if (!isRecord(block) || block.type !== 'text') return invalid(`system.${i}.type: Input should be 'text'`);
    if (typeof block.text !== 'string') return invalid(`system.${i}.text: Field required`);
    if (block.text === '') return invalid('system: text content blocks must be non-empty');
    const cache = validateCacheControl(block.cache_control, `system.${i}`);
    if (cache) return cache;
  }
  return undefined;
}

function validateTools(tools: unknown): Refusal | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return invalid('tools: Input should be a valid list');
  const names = new Set<string>();
  for (const [i, tool] of tools.entries()) {
    if (!isRecord(tool)) return invalid(`tools.${i}: Input should be a valid dictionary`);
    if (tool.type !== undefined && tool.type !== 'custom') continue; // server tools (web_search_…) have their own shape
    const at = `tools.${i}.custom`;
    for (const key of Object.keys(tool)) {
      if (!['type', 'name', 'description', 'input_schema', 'cache_control'].includes(key)) {
        return invalid(`${at}.${key}: Extra inputs are not permitted`);
      }
    }
    if (typeof tool.name !== 'string') return invalid(`${at}.name: Field required`);
    if (!TOOL_NAME.test(tool.name))
      return invalid(`${at}.name: String should match pattern '${TOOL_NAME.source}'`);
    if (tool.description !== undefined && typeof tool.description !== 'string') {
      return invalid(`${at}.description: Input should be a valid string`);
    }
    if (tool.input_schema === undefined) return invalid(`${at}.input_schema: Field required`);
    if (!isRecord(tool.input_schema))
      return invalid(`${at}.input_schema: Input should be a valid dictionary`);
    if (tool.input_schema.type !== 'object')
      return invalid(`${at}.input_schema.type: Input should be 'object'`);
    const cache = validateCacheControl(tool.cache_control, at);
    if (cache) return cache;
    if (names.has(tool.name)) return invalid('tools: Tool names must be unique.');
    names.add(tool.name);
  }
  return undefined;
}

function validateBlock(block: unknown, role: string, at: string): Refusal | undefined {
  if (!isRecord(block)) return invalid(`${at}: Input should be a valid dictionary`);
  if (typeof block.type !== 'string' || !BLOCK_TYPES.includes(block.type)) {
    return invalid(
      `${at}: Input tag '${String(block.type)}' found using 'type' does not match any of the expected tags: ${BLOCK_TYPES.map((t) => `'${t}'`).join(', ')}`,
    );
  }
  switch (block.type) {
    case 'text':
      return validateTextBlock(block, at);
    case 'tool_use':
      if (role !== 'assistant')
        return invalid(`${at}: tool_use blocks are only allowed in assistant messages`);
      if (typeof block.id !== 'string' || block.id === '')
        return invalid(`${at}.tool_use.id: Field required`);
      if (typeof block.name !== 'string' || !TOOL_NAME.test(block.name)) {
        return invalid(`${at}.tool_use.name: String should match pattern '${TOOL_NAME.source}'`);
      }
      if (!isRecord(block.input)) return invalid(`${at}.tool_use.input: Input should be a valid dictionary`);
      return undefined;
    case 'tool_result':
      return validateToolResult(block, role, at);
    default:
      return undefined;
  }
}

function validateToolResult(block: JsonRecord, role: string, at: string): Refusal | undefined {
  if (role !== 'user') return invalid(`${at}: tool_result blocks are only allowed in user messages`);
  if (typeof block.tool_use_id !== 'string' || block.tool_use_id === '') {
    return invalid(`${at}.tool_result.tool_use_id: Field required`);
  }
  if (block.is_error !== undefined && typeof block.is_error !== 'boolean') {
    return invalid(`${at}.tool_result.is_error: Input should be a valid boolean`);
  }
  const content = block.content;
  if (Array.isArray(content)) {
    for (const [k, inner] of content.entries()) {
      if (!isRecord(inner) || (inner.type !== 'text' && inner.type !== 'image')) {
        return invalid(
          `${at}.tool_result.content.${k}: Input tag '${String(isRecord(inner) ? inner.type : inner)}' found using 'type' does not match any of the expected tags: 'text', 'image'`,
        );
      }
      const text =
        inner.type === 'text' ? validateTextBlock(inner, `${at}.tool_result.content.${k}`) : undefined;
      if (text) return text;
    }
  } else if (content !== undefined && typeof content !== 'string') {
    return invalid(`${at}.tool_result.content: Input should be a valid string or a list of content blocks`);
  }
  return validateCacheControl(block.cache_control, at);
}

function blocksOf(message: unknown): JsonRecord[] {
  if (!isRecord(message) || !Array.isArray(message.content)) return [];
  return message.content.filter(isRecord);
}

function toolUseIds(message: unknown): string[] {
  return blocksOf(message)
    .filter((b) => b.type === 'tool_use')
    .map((b) => String(b.id));
}

function validateMessages(messages: unknown): Refusal | undefined {
  if (messages === undefined) return invalid('messages: Field required');
  if (!Array.isArray(messages)) return invalid('messages: Input should be a valid list');
  if (messages.length === 0) return invalid('messages: at least one message is required');
  for (const [i, message] of messages.entries()) {
    const shape = validateMessageShape(message, i, i === messages.length - 1);
    if (shape) return shape;
  }
  if (isRecord(messages[0]) && messages[0].role !== 'user') {
    return invalid('messages: first message must use the "user" role');
  }
  return validatePairing(messages);
}

function validateMessageShape(message: unknown, i: number, isLast: boolean): Refusal | undefined {
  const at = `messages.${i}`;
  if (!isRecord(message)) return invalid(`${at}: Input should be a valid dictionary`);
  if (message.role === 'system') {
    return invalid(
      'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    );
  }
  if (message.role !== 'user' && message.role !== 'assistant')
    return invalid(`${at}.role: Input should be 'user' or 'assistant'`);
  const content = message.content;
  const emptyAllowed = isLast && message.role === 'assistant';
  if (content === undefined) return invalid(`${at}.content: Field required`);
  if (typeof content === 'string') {
    if (content === '' && !emptyAllowed) {
      return invalid(
        `${at}: all messages must have non-empty content except for the optional final assistant message`,
      );
    }
    return undefined;
  }
  if (!Array.isArray(content))
    return invalid(`${at}.content: Input should be a valid string or a list of content blocks`);
  if (content.length === 0 && !emptyAllowed) {
    return invalid(
      `${at}: all messages must have non-empty content except for the optional final assistant message`,
    );
  }
  let seenOther = false;
  for (const [j, block] of content.entries()) {
    const refusal = validateBlock(block, message.role, `${at}.content.${j}`);
    if (refusal) return refusal;
    const isResult = isRecord(block) && block.type === 'tool_result';
    if (isResult && seenOther) {
      return invalid(
        `${at}.content.${j}: tool_result blocks must come first in the content array, before any other block`,
      );
    }
    seenOther ||= !isResult;
  }
  return undefined;
}

function validatePairing(messages: unknown[]): Refusal | undefined {
  const seen = new Set<string>();
  for (const [i, message] of messages.entries()) {
    const uses = toolUseIds(message);
    for (const id of uses) {
      if (seen.has(id))
        return invalid(`messages.${i}: \`tool_use\` ids must be unique, found duplicate: ${id}`);
      seen.add(id);
    }
    const next = messages[i + 1];
    const answered = new Set(
      isRecord(next) && next.role === 'user'
        ? blocksOf(next)
            .filter((b) => b.type === 'tool_result')
            .map((b) => String(b.tool_use_id))
        : [],
    );
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length > 0) {
      return invalid(
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
    const previous =
      i > 0 && isRecord(messages[i - 1]) && (messages[i - 1] as JsonRecord).role === 'assistant';
    const asked = new Set(previous ? toolUseIds(messages[i - 1]) : []);
    for (const [j, block] of blocksOf(message).entries()) {
      if (block.type === 'tool_result' && !asked.has(String(block.tool_use_id))) {
        return invalid(
          `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
  }
  return undefined;
}
