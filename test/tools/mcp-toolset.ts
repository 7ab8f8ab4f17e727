import type { AgentSpec, McpServerSpec } from '../../internal/agent/spec.js';
import { createToolset } from '../../internal/tools/index.js';
import type { Toolset, ToolsetOptions } from '../../internal/tools/types.js';
import { childrenOf, toolContext } from './helpers.js';

/** createToolset for a bare agent with these MCP servers (and built-ins), collecting its reports. */
export function spec(mcpServers: McpServerSpec[], tools: string[] = []): AgentSpec {
  return { tools, disallowedTools: [], mcpServers } as unknown as AgentSpec;
}

export type Reported = Parameters<ToolsetOptions['report']>[0];

export async function open(
  servers: McpServerSpec[],
  options: { tools?: string[]; env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {},
): Promise<{ toolset: Toolset; reports: Reported[] }> {
  const reports: Reported[] = [];
  const context = toolContext(process.cwd(), {
    env: { PATH: process.env.PATH, ...options.env },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const toolset = await createToolset({
    spec: spec(servers, options.tools),
    context,
    report: (e) => reports.push(e),
  });
  return { toolset, reports };
}

export function tool(toolset: Toolset, name: string) {
  const found = toolset.tools.find((t) => t.spec.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

/** Pids of the stdio server processes this test process started. */
export const childPids = () => childrenOf(process.pid);

export const ctx = () => toolContext(process.cwd());
export const stdio = (
  name: string,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): McpServerSpec => ({
  name,
  transport: 'stdio',
  command,
  args,
  env,
});
