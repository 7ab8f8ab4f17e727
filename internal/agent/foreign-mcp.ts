import { own } from '../config/own.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue } from '../provider/types.js';

/**
 * `mcpServers` of Claude Code (a list of server names or `{ <name>: <settings> }` objects, with
 * `type` = stdio | http | sse) and of Gemini CLI (a `{ <name>: <settings> }` table, with `url` for
 * SSE and `httpUrl` for streamable HTTP) → axe's `mcp_servers` entries. Pure.
 */
export interface MappedMcpServers {
  servers: JsonObject[];
  warnings: string[];
  errors: string[];
}

const TRANSPORTS: Readonly<Record<string, string>> = {
  stdio: 'stdio',
  http: 'streamable-http',
  'streamable-http': 'streamable-http',
  sse: 'sse',
};

export function mapForeignMcpServers(value: JsonValue): MappedMcpServers {
  const result: MappedMcpServers = { servers: [], warnings: [], errors: [] };
  const entries: [string, JsonValue][] = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item === 'string') {
        result.warnings.push(
          `"${item}" names a server configured in Claude Code; axe needs its settings here ({ ${item}: { command: … } })`,
        );
      } else if (isObject(item)) entries.push(...Object.entries(item));
      else
        result.errors.push(`must list server names or { <name>: <settings> } (got ${JSON.stringify(item)})`);
    }
  } else if (isObject(value)) entries.push(...Object.entries(value));
  else
    result.errors.push(`must be a table of servers: { <name>: <settings> } (got ${JSON.stringify(value)})`);

  for (const [name, settings] of entries) {
    if (!isObject(settings)) {
      result.errors.push(`${name}: must be a table of server settings (got ${JSON.stringify(settings)})`);
      continue;
    }
    result.servers.push(mapServer(name, settings, result));
  }
  return result;
}

function mapServer(name: string, settings: JsonObject, result: MappedMcpServers): JsonObject {
  const server: JsonObject = { name };
  for (const [key, value] of Object.entries(settings)) {
    if (key === 'command' || key === 'args' || key === 'env' || key === 'headers') server[key] = value;
    else if (key === 'type' || key === 'transport') {
      const transport = typeof value === 'string' ? own(TRANSPORTS, value) : undefined;
      if (transport) server.transport = transport;
      else result.errors.push(`${name}.${key}: must be stdio, http or sse (got ${JSON.stringify(value)})`);
    } else if (key === 'httpUrl') {
      server.url = value;
      server.transport = 'streamable-http';
    } else if (key === 'url') server.url = value;
    else result.warnings.push(`${name}.${key}: not supported by axe yet; ignored`);
  }
  // Gemini CLI reads a bare `url` as SSE (Claude Code says which with `type`).
  if (server.url !== undefined && server.transport === undefined) server.transport = 'sse';
  return server;
}
