/**
 * Rules Go axe enforces when it loads an agent, so a file it refuses is refused here too (exit 2,
 * before any request), in Go's words: in a TOML file (Go's format) every name in `tools` must be
 * a built-in tool (MCP tools come from mcp_servers; call_agent from sub_agents), and MCP server
 * names must be unique. The tool names of Markdown and YAML agents are `axe validate`'s to check
 * (lint-checks.ts): their own programs know tools axe does not.
 */
import { suggestion } from '../config/did-you-mean.js';
import { BUILTIN_TOOL_NAMES, CALL_AGENT_TOOL_NAME } from '../tools/types.js';
import type { Finding } from './load.js';
import type { AgentSpec } from './spec.js';

export function goRuleFindings(spec: AgentSpec): Finding[] {
  const findings: Finding[] = [];
  const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
  const hasMcp = spec.mcpServers.length > 0;
  for (const [index, tool] of spec.format === 'toml' ? spec.tools.entries() : []) {
    const goWords = `unknown tool "${tool}" in tools config`;
    if (tool === CALL_AGENT_TOOL_NAME) {
      const message = `${goWords}: "${CALL_AGENT_TOOL_NAME}" comes with sub_agents; remove it from tools`;
      findings.push({ file: spec.source, severity: 'error', field: `tools[${index}]`, message });
    } else if (!builtins.includes(tool) && !hasMcp) {
      const message = `${goWords}${suggestion(tool, builtins)}: built-in tools are ${builtins.join(', ')}; other tools need mcp_servers`;
      findings.push({ file: spec.source, severity: 'error', field: `tools[${index}]`, message });
    }
  }
  const seen = new Set<string>();
  for (const [index, server] of spec.mcpServers.entries()) {
    if (seen.has(server.name)) {
      const message = `mcp_servers names must be unique: "${server.name}"`;
      findings.push({ file: spec.source, severity: 'error', field: `mcp_servers[${index}].name`, message });
    }
    seen.add(server.name);
  }
  return findings;
}
