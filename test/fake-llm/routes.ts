import { anthropicWire } from './anthropic.js';
import { bedrockWire } from './bedrock.js';
import { googleWire } from './google.js';
import { ollamaWire } from './ollama.js';
import { openAiWire } from './openai.js';
import { responsesWire } from './responses.js';
import type { WireFormat } from './wire.js';

export interface Route {
  format: WireFormat;
  /** False when nothing is served at this method + path: the wire's 404 is sent. */
  found: boolean;
  pathModel?: string;
}

const GOOGLE_PATH = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;
const BEDROCK_PATH = /^\/model\/([^/]+)\/converse$/;

/** The wire a path belongs to (also for unknown paths, so the 404 speaks the right dialect). */
function formatOf(path: string): WireFormat {
  if (path.startsWith('/v1beta/')) return googleWire;
  if (path.startsWith('/model/')) return bedrockWire;
  if (path.startsWith('/api/')) return ollamaWire;
  if (path.startsWith('/v1/messages')) return anthropicWire;
  if (path.startsWith('/v1/responses')) return responsesWire;
  return openAiWire;
}

export function routeOf(method: string, path: string): Route {
  const format = formatOf(path);
  if (method !== 'POST') return { format, found: false };
  const google = GOOGLE_PATH.exec(path);
  if (google) return { format, found: true, pathModel: decodeURIComponent(google[1] ?? '') };
  const bedrock = BEDROCK_PATH.exec(path);
  if (bedrock) return { format, found: true, pathModel: decodeURIComponent(bedrock[1] ?? '') };
  const found = ['/v1/messages', '/v1/chat/completions', '/v1/responses', '/api/chat'].includes(path);
  return { format, found };
}
