/**
 * Rules Go axe enforces when it loads an agent, so a file it refuses is refused here too (exit 2,
 * before any request), in Go's words: in a TOML file (Go's format) every name in `tools` must be
 * a built-in tool (MCP tools come from mcp_servers; call_agent from sub_agents), and MCP server
 * names must be unique. The tool names of Markdown and YAML agents are `axe validate`'s to check
 * (lint-checks.ts): their own programs know tools axe does not.
 */
import { suggestion } from '../config/did-you-mean.js';
import { BUILTIN_TOOL_NAMES, CALL_AGENT_TOOL_NAME } from '../tools/types.js';
import type { Finding } from './finding.js';
import type { AgentSpec } from './spec.js';

export function goRuleFindings(spec: AgentSpec): Finding[] {
  const findings = spec.format === 'toml' ? toolNameFindings(spec) : [];
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

/**
 * Names in `tools` that are no built-in tool (unless MCP servers may offer them), and an injected
 * `call_agent`; in a TOML file in Go's words.
 */
export function toolNameFindings(spec: AgentSpec): Finding[] {
  const findings: Finding[] = [];
  const builtins: readonly string[] = BUILTIN_TOOL_NAMES;
  const hasMcp = spec.mcpServers.length > 0;
  for (const [index, tool] of spec.tools.entries()) {
    const what = spec.format === 'toml' ? `unknown tool "${tool}" in tools config` : `unknown tool "${tool}"`;
    let message: string | undefined;
    if (tool === CALL_AGENT_TOOL_NAME) {
      const why = `"${CALL_AGENT_TOOL_NAME}" comes with sub_agents; remove it from tools`;
      message = spec.format === 'toml' ? `${what}: ${why}` : why;
    } else if (!builtins.includes(tool) && !hasMcp) {
      message = `${what}${suggestion(tool, builtins)}: built-in tools are ${builtins.join(', ')}; other tools need mcp_servers`;
    }
    if (message) findings.push({ file: spec.source, severity: 'error', field: `tools[${index}]`, message });
  }
  return findings;
}
