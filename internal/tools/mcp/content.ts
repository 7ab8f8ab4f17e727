import type { JsonObject } from '../../provider/types.js';
import { utf8Prefix } from '../../text.js';
import { MAX_OUTPUT_BYTES, truncationMarker } from '../output-limit.js';
import { asRecord } from '../record.js';
import type { ToolOutput } from '../types.js';

/**
 * Pure translation of an MCP `tools/call` result into the text the model gets. Text parts are
 * joined; every other part is described (type, MIME type, size) rather than dropped. Past
 * MAX_OUTPUT_BYTES the text is cut (at a character boundary) and says how much more there was.
 */
export function mcpResultToOutput(result: unknown): ToolOutput {
  const body = asRecord(result);
  const parts = Array.isArray(body.content) ? body.content.map(describePart) : [];
  if (parts.length === 0 && body.structuredContent !== undefined)
    parts.push(JSON.stringify(body.structuredContent));
  if (parts.length === 0 && body.toolResult !== undefined) parts.push(JSON.stringify(body.toolResult));
  return { content: capped(parts.join('\n')), isError: body.isError === true };
}

function capped(text: string): string {
  // Each UTF-16 unit is at most 3 bytes of UTF-8: most results need no encoding to be measured.
  if (text.length * 3 <= MAX_OUTPUT_BYTES) return text;
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= MAX_OUTPUT_BYTES) return text;
  const kept = utf8Prefix(bytes, MAX_OUTPUT_BYTES);
  const more = bytes.length - Buffer.byteLength(kept, 'utf8');
  return `${kept}${truncationMarker(more)}`;
}

function describePart(part: unknown): string {
  const item = asRecord(part);
  const text = (key: string): string | undefined => {
    const field = item[key];
    return typeof field === 'string' ? field : undefined;
  };
  switch (item.type) {
    case 'text':
      return text('text') ?? '';
    case 'image':
    case 'audio':
      return `[${item.type}: ${text('mimeType') ?? 'unknown type'}, ${base64Bytes(text('data'))} bytes]`;
    case 'resource': {
      const resource = asRecord(item.resource);
      const uri = typeof resource.uri === 'string' ? resource.uri : 'unknown uri';
      if (typeof resource.text === 'string') return `[resource: ${uri}]\n${resource.text}`;
      const mime = typeof resource.mimeType === 'string' ? resource.mimeType : 'unknown type';
      const blob = typeof resource.blob === 'string' ? resource.blob : undefined;
      return `[resource: ${uri}, ${mime}, ${base64Bytes(blob)} bytes]`;
    }
    case 'resource_link':
      return `[resource link: ${text('name') ?? ''} <${text('uri') ?? ''}>]`;
    default:
      return `[${typeof item.type === 'string' ? item.type : 'unknown'} content not shown]`;
  }
}

function base64Bytes(data: string | undefined): number {
  if (!data) return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.floor((data.length * 3) / 4) - padding;
}

/** An MCP tool's input schema as plain JSON (an object schema even when the server sent none). */
export function toInputSchema(schema: unknown): JsonObject {
  const parsed: unknown = JSON.parse(JSON.stringify(schema ?? {}));
  const record = asRecord(parsed) as JsonObject;
  return record.type === 'object' ? record : { ...record, type: 'object' };
}
