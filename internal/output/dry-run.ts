import type { McpServerSpec, SubAgentsConfig } from '../agent/spec.js';
import { redactArgs, redactUrl } from '../redact.js';

/** Everything `--dry-run` shows, resolved by the caller (no network, no API key). */
export interface DryRunView {
  /** `provider/model`. */
  model: string;
  workdir: string;
  timeoutSeconds: number;
  temperature?: number;
  maxTokens?: number;
  /** Tree-wide token budget; undefined = unlimited. */
  budgetMaxTokens?: number;
  systemPrompt: string;
  /** The skill's content (empty or undefined = none). */
  skill?: string;
  /** Context files, relative to the workdir, in prompt order. */
  files: string[];
  /** Piped stdin as read (undefined or blank = none). */
  stdin?: string;
  /** The user message the agent will receive. */
  userMessage: string;
  /** Memory entries loaded into the prompt; undefined when memory is off. */
  memory?: string;
  tools: string[];
  mcpServers: McpServerSpec[];
  subAgents: string[];
  subAgentsConfig: SubAgentsConfig;
}

/**
 * The Go axe dry-run layout (`=== Dry Run ===`, `--- Section ---`, `(none)` where empty), with a
 * `--- User Message ---` section after `--- Stdin ---`, since `-p` or the default can set it too.
 * Header values and env of MCP servers are never shown: they may carry keys.
 */
export function renderDryRun(view: DryRunView): string {
  const lines: string[] = ['=== Dry Run ===', ''];
  lines.push(`Model:    ${view.model}`);
  lines.push(`Workdir:  ${view.workdir}`);
  lines.push(`Timeout:  ${view.timeoutSeconds}s`);
  lines.push(
    `Params:   temperature=${view.temperature ?? 'default'}, max_tokens=${view.maxTokens ?? 'default'}`,
  );
  lines.push(`Budget:   ${view.budgetMaxTokens ?? 0} tokens (0 = unlimited)`);

  section(lines, '--- System Prompt ---', [orNone(view.systemPrompt)]);
  section(lines, '--- Skill ---', [orNone(view.skill)]);
  section(lines, `--- Files (${view.files.length}) ---`, view.files.length > 0 ? view.files : ['(none)']);
  section(lines, '--- Stdin ---', [orNone(view.stdin)]);
  const fromStdin = view.stdin !== undefined && view.userMessage === view.stdin;
  section(lines, '--- User Message ---', [fromStdin ? '(stdin, above)' : view.userMessage]);
  if (view.memory !== undefined) section(lines, '--- Memory ---', [orNone(view.memory)]);
  section(lines, '--- Tools ---', [view.tools.length > 0 ? view.tools.join(', ') : '(none)']);
  section(
    lines,
    '--- MCP Servers ---',
    view.mcpServers.length > 0 ? view.mcpServers.map(describeMcpServer) : ['(none)'],
  );
  section(lines, '--- Sub-Agents ---', subAgentLines(view));
  return `${lines.join('\n')}\n`;
}

function section(lines: string[], header: string, body: string[]): void {
  lines.push('', header, ...body);
}

function orNone(text: string | undefined): string {
  return text !== undefined && text.trim() !== '' ? text : '(none)';
}

function describeMcpServer(server: McpServerSpec): string {
  if (server.transport === 'stdio') {
    return `${server.name}: ${[server.command, ...redactArgs(server.args)].join(' ')} (stdio)`;
  }
  return `${server.name}: ${redactUrl(server.url)} (${server.transport})`;
}

function subAgentLines(view: DryRunView): string[] {
  if (view.subAgents.length === 0) return ['(none)'];
  const config = view.subAgentsConfig;
  return [
    view.subAgents.join(', '),
    `Max Depth: ${config.maxDepth}`,
    `Parallel:  ${config.parallel ? 'yes' : 'no'}`,
    `Timeout:   ${config.timeout}s`,
  ];
}
