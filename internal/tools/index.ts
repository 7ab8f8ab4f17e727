import { ARTIFACT_TOOLS, withArtifactParameter } from './artifact-arg.js';
import { listedToolNames } from './listed.js';
import type { McpConnection } from './mcp/index.js';
import { BUILTIN_TOOLS, isBuiltinToolName } from './registry.js';
import {
  type BuiltinToolName,
  CALL_AGENT_TOOL_NAME,
  type Tool,
  type Toolset,
  type ToolsetOptions,
  WRITING_TOOL_NAMES,
} from './types.js';

export { BUILTIN_TOOLS, isBuiltinToolName } from './registry.js';
export { summarizeToolCall } from './summary.js';

/** Tool names every provider accepts (Anthropic's and OpenAI's rule, the strictest). */
const PROVIDER_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * The tools of one agent run: the built-ins named in `spec.tools` (minus `disallowedTools`) and
 * the tools of `spec.mcpServers`, connected in parallel. A name that clashes with one already
 * taken keeps the first (built-ins come first) and reports a warning. Throws ConfigError for a
 * missing `${VAR}` and RuntimeError for a server that cannot be reached.
 */
export async function createToolset(options: ToolsetOptions): Promise<Toolset> {
  const { spec, context, report } = options;
  const disallowed = new Set(spec.disallowedTools);
  const tools: Tool[] = listedToolNames(spec).flatMap((name) =>
    isBuiltinToolName(name) ? [builtinTool(name, context)] : [],
  );
  const connections = spec.mcpServers.length > 0 ? await connectMcpServers(spec.mcpServers, context) : [];
  const taken = new Set([CALL_AGENT_TOOL_NAME, ...tools.map((t) => t.spec.name)]);
  for (const connection of connections) {
    let offered = 0;
    for (const original of connection.tools) {
      if (disallowed.has(original.spec.name)) continue;
      // MCP allows names providers refuse (`docs.search`, `admin/list`): the model sees a name it
      // can call; the call still goes to the server under the tool's own name.
      const tool = PROVIDER_TOOL_NAME.test(original.spec.name) ? original : renamed(original, taken);
      const name = tool.spec.name;
      if (disallowed.has(name)) continue;
      if (tool !== original) {
        report({
          type: 'mcp',
          server: connection.server,
          message: `tool ${JSON.stringify(original.spec.name)} offered as "${name}" (providers accept only letters, digits, "_" and "-")`,
        });
      }
      if (taken.has(name)) {
        report({
          type: 'warning',
          message: `mcp server "${connection.server}": tool "${name}" clashes with a tool already offered; keeping the first one`,
        });
        continue;
      }
      taken.add(name);
      tools.push(tool);
      offered++;
    }
    report({ type: 'mcp', server: connection.server, message: `connected (${offered} tools)` });
  }
  warnUnknown(spec.tools, tools, report);
  let closing: Promise<void> | undefined;
  return {
    tools,
    close: () => {
      closing ??= Promise.all(connections.map((c) => c.close())).then(() => {});
      return closing;
    },
  };
}

/** `tool` under a name every provider accepts, not yet taken (`docs.search` → `docs_search`). */
function renamed(tool: Tool, taken: ReadonlySet<string>): Tool {
  const base = tool.spec.name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 60) || 'tool';
  let name = base;
  for (let n = 2; taken.has(name); n++) name = `${base}_${n}`;
  return { ...tool, spec: { ...tool.spec, name } };
}

/** A built-in tool; the file tools take an `artifact` argument when the agent's artifact system is on. */
function builtinTool(name: BuiltinToolName, context: ToolsetOptions['context']): Tool {
  const tool = { ...BUILTIN_TOOLS[name], readOnly: !WRITING_TOOL_NAMES.has(name) };
  const verb = Object.hasOwn(ARTIFACT_TOOLS, name) ? ARTIFACT_TOOLS[name] : undefined;
  if (!context.artifacts || verb === undefined) return tool;
  return { ...tool, spec: withArtifactParameter(tool.spec, verb) };
}

/** The MCP SDK is loaded only for an agent that declares servers. */
async function connectMcpServers(
  servers: ToolsetOptions['spec']['mcpServers'],
  context: ToolsetOptions['context'],
): Promise<McpConnection[]> {
  const mcp = await import('./mcp/index.js');
  return mcp.connectMcpServers(servers, context);
}

/** A name in `tools = [...]` that is neither a built-in nor offered by an MCP server is a typo. */
function warnUnknown(listed: string[], offered: Tool[], report: ToolsetOptions['report']): void {
  const names = new Set(offered.map((t) => t.spec.name));
  for (const name of listed) {
    if (!names.has(name) && !isBuiltinToolName(name) && name !== CALL_AGENT_TOOL_NAME) {
      report({
        type: 'warning',
        message: `tool "${name}" is neither a built-in tool nor offered by an MCP server`,
      });
    }
  }
}
