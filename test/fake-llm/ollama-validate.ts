import { isRecord, jsonTypeName } from './json.js';
import type { IncomingRequest, Refusal } from './wire.js';

/** Validation of POST /api/chat. Ollama decodes with Go's encoding/json, so shape errors read like Go's. */
const ROLES = ['system', 'user', 'assistant', 'tool'];

function invalid(message: string): Refusal {
  return { status: 400, message };
}

function unmarshal(value: unknown, field: string, goType: string): Refusal {
  const kind = value === undefined ? 'null' : jsonTypeName(value).replace('boolean', 'bool');
  return invalid(`json: cannot unmarshal ${kind} into Go struct field ${field} of type ${goType}`);
}

export function validateOllama(request: IncomingRequest): Refusal | undefined {
  const body = request.body;
  if (!isRecord(body)) return invalid('invalid character looking for beginning of value');
  if (typeof body.model !== 'string' || body.model === '') return invalid('model is required');
  if (body.stream !== undefined && typeof body.stream !== 'boolean') {
    return unmarshal(body.stream, 'ChatRequest.stream', 'bool');
  }
  if (body.options !== undefined && !isRecord(body.options)) {
    return unmarshal(body.options, 'ChatRequest.options', 'map[string]interface {}');
  }
  if (body.format !== undefined && body.format !== 'json' && !isRecord(body.format) && body.format !== '') {
    return invalid(`invalid format: ${JSON.stringify(body.format)}; expected "json" or a JSON schema`);
  }
  return validateTools(body.tools) ?? validateMessages(body.messages);
}

function validateTools(tools: unknown): Refusal | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return unmarshal(tools, 'ChatRequest.tools', 'api.Tools');
  for (const tool of tools) {
    if (!isRecord(tool)) return unmarshal(tool, 'ChatRequest.tools', 'api.Tool');
    if (!isRecord(tool.function)) return unmarshal(tool.function, 'Tool.tools.function', 'api.ToolFunction');
    if (typeof tool.function.name !== 'string')
      return unmarshal(tool.function.name, 'ToolFunction.tools.function.name', 'string');
    const parameters = tool.function.parameters;
    if (parameters !== undefined && !isRecord(parameters)) {
      return unmarshal(parameters, 'ToolFunction.tools.function.parameters', 'api.ToolFunctionParameters');
    }
    const dropped = parameters === undefined ? undefined : droppedKey(tool.function.name, parameters);
    if (dropped !== undefined) return dropped;
  }
  return undefined;
}

/**
 * The real server decodes parameters into Go structs and silently drops any other key, so the
 * model never sees it; the fake refuses instead, so that a dropped constraint cannot go unnoticed.
 */
const PARAMETER_KEYS = ['type', '$defs', 'items', 'required', 'properties'];
const PROPERTY_KEYS = ['type', 'items', 'description', 'enum'];

function droppedKey(tool: string, parameters: Record<string, unknown>): Refusal | undefined {
  const unread = (where: string, key: string, read: string[]) =>
    invalid(
      `tool "${tool}": ${where} key "${key}" would be dropped by Ollama (it reads only ${read.join(', ')})`,
    );
  const extra = Object.keys(parameters).find((key) => !PARAMETER_KEYS.includes(key));
  if (extra !== undefined) return unread('parameters', extra, PARAMETER_KEYS);
  const properties = isRecord(parameters.properties) ? parameters.properties : {};
  for (const [name, schema] of Object.entries(properties)) {
    if (!isRecord(schema)) return unmarshal(schema, 'ToolFunctionParameters.properties', 'api.ToolProperty');
    const key = Object.keys(schema).find((k) => !PROPERTY_KEYS.includes(k));
    if (key !== undefined) return unread(`property "${name}"`, key, PROPERTY_KEYS);
  }
  return undefined;
}

function validateMessages(messages: unknown): Refusal | undefined {
  if (messages === undefined) return undefined;
  if (!Array.isArray(messages)) return unmarshal(messages, 'ChatRequest.messages', '[]api.Message');
  for (const message of messages) {
    if (!isRecord(message)) return unmarshal(message, 'ChatRequest.messages', 'api.Message');
    if (typeof message.role !== 'string' || !ROLES.includes(message.role)) {
      return invalid(
        `invalid role: ${JSON.stringify(message.role ?? '')}; expected one of ${ROLES.join(', ')}`,
      );
    }
    if (message.content !== undefined && typeof message.content !== 'string') {
      return unmarshal(message.content, 'Message.messages.content', 'string');
    }
    if (message.tool_name !== undefined && typeof message.tool_name !== 'string') {
      return unmarshal(message.tool_name, 'Message.messages.tool_name', 'string');
    }
    const calls = message.tool_calls;
    if (calls === undefined) continue;
    if (!Array.isArray(calls)) return unmarshal(calls, 'Message.messages.tool_calls', '[]api.ToolCall');
    for (const call of calls) {
      if (!isRecord(call) || !isRecord(call.function)) {
        return unmarshal(
          isRecord(call) ? call.function : call,
          'ToolCall.messages.tool_calls.function',
          'api.ToolCallFunction',
        );
      }
      if (typeof call.function.name !== 'string') {
        return unmarshal(call.function.name, 'ToolCallFunction.messages.tool_calls.function.name', 'string');
      }
      if (!isRecord(call.function.arguments)) {
        return unmarshal(
          call.function.arguments,
          'ToolCallFunction.messages.tool_calls.function.arguments',
          'api.ToolCallFunctionArguments',
        );
      }
    }
  }
  return undefined;
}
