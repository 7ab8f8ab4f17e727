import { delegatedLimits } from '../agent/delegated-limits.js';
import { describeInput } from '../agent/inputs.js';
import type { InputSpec, McpServerSpec, OutputSpec, SubAgentsConfig } from '../agent/spec.js';
import type { JsonValue } from '../provider/types.js';
import { redactArgs, redactUrl } from '../redact.js';

/** Everything `--dry-run` shows, resolved by the caller (no network, no API key). */
export interface DryRunView {
  /** `provider/model`. */
  model: string;
  workdir: string;
  timeoutSeconds: number;
  temperature?: number;
  maxTokens?: number;
  /** `[params] response_format` type, when set. */
  responseFormat?: string;
  /** Tree-wide token budget; undefined = unlimited. */
  budgetMaxTokens?: number;
  stream: boolean;
  systemPrompt: string;
  /** The skill's content (empty or undefined = none). */
  skill?: string;
  /** Context files, relative to the workdir, in prompt order. */
  files: string[];
  /** The user message the agent will receive. */
  userMessage: string;
  /** The message sent when neither `-p` nor stdin gives one: shown as `(default)`. */
  defaultUserMessage: string;
  /** Memory entries loaded into the prompt; undefined when memory is off. */
  memory?: string;
  /**
   * Go axe's layout: the file's `tools` (never the injected `call_agent`). With `offered` (a file
   * that is not Go axe's TOML): every tool the model is offered, delegation tools included.
   */
  tools: string[];
  /** Not a Go axe (TOML) file: `Params:` names only what is sent; `tools` is what is offered. */
  offered?: boolean;
  mcpServers: McpServerSpec[];
  subAgents: string[];
  subAgentsConfig: SubAgentsConfig;
  /** The agent's typed inputs with the values this run gives them (axe; shown only when declared). */
  inputs?: { spec: InputSpec; value?: JsonValue }[];
  /** `[output]` (axe; shown only when declared). */
  output?: OutputSpec;
  /** axe's fields beyond Go's that the sections above do not show, one line each (shown when any). */
  more?: string[];
}

/** The parameters a request carries; none: the provider's own defaults. */
function sentParams(view: DryRunView): string {
  const sent = [
    ...(view.temperature !== undefined ? [`temperature=${view.temperature}`] : []),
    ...(view.maxTokens !== undefined ? [`max_tokens=${view.maxTokens}`] : []),
    ...(view.responseFormat !== undefined ? [`response_format=${view.responseFormat}`] : []),
  ];
  return sent.length > 0 ? sent.join(', ') : "(none sent: the provider's defaults)";
}

/**
 * Go axe's dry-run layout line for line (v1.8 `printDryRun`): unset parameters are 0, an empty
 * system prompt is an empty line, the default user message is `(default)`. Header values and env
 * of MCP servers are never shown: they may carry keys.
 */
export function renderDryRun(view: DryRunView): string {
  const lines: string[] = ['=== Dry Run ===', ''];
  lines.push(`Model:    ${view.model}`);
  lines.push(`Workdir:  ${view.workdir}`);
  lines.push(`Timeout:  ${view.timeoutSeconds}s`);
  const format = view.responseFormat !== undefined ? `, response_format=${view.responseFormat}` : '';
  lines.push(
    view.offered
      ? `Params:   ${sentParams(view)}`
      : `Params:   temperature=${view.temperature ?? 0}, max_tokens=${view.maxTokens ?? 0}${format}`,
  );
  lines.push(`Budget:   ${view.budgetMaxTokens ?? 0} tokens (0 = unlimited)`);
  lines.push(`Stream:   ${view.stream ? 'yes' : 'no'}`);

  section(lines, '--- System Prompt ---', [view.systemPrompt]);
  section(lines, '--- Skill ---', [view.skill !== undefined && view.skill !== '' ? view.skill : '(none)']);
  section(lines, `--- Files (${view.files.length}) ---`, view.files.length > 0 ? view.files : ['(none)']);
  const isDefault = view.userMessage === view.defaultUserMessage;
  section(lines, '--- User Message ---', [isDefault ? '(default)' : view.userMessage]);
  if (view.memory !== undefined)
    section(lines, '--- Memory ---', [view.memory !== '' ? view.memory : '(none)']);
  section(lines, '--- Tools ---', [view.tools.length > 0 ? view.tools.join(', ') : '(none)']);
  section(
    lines,
    '--- MCP Servers ---',
    view.mcpServers.length > 0 ? view.mcpServers.map(describeMcpServer) : ['(none)'],
  );
  section(lines, '--- Sub-Agents ---', subAgentLines(view));
  const delegated = delegatedLines(view.subAgentsConfig);
  if (delegated.length > 0) section(lines, '--- Delegated Work ---', delegated);
  if (view.inputs !== undefined && view.inputs.length > 0) {
    section(
      lines,
      '--- Inputs ---',
      view.inputs.map(
        ({ spec, value }) =>
          `${describeInput(spec)} = ${value === undefined ? '(not given)' : JSON.stringify(value)}`,
      ),
    );
  }
  if (view.output !== undefined) section(lines, '--- Output ---', outputLines(view.output));
  if (view.more !== undefined && view.more.length > 0) section(lines, '--- More ---', view.more);
  return `${lines.join('\n')}\n`;
}

/** `submit_result(review)`, what it is, and its schema as one line of JSON. */
function outputLines(output: OutputSpec): string[] {
  return [
    `submit_result(${output.name})${output.description !== '' ? `: ${output.description}` : ''}`,
    `schema: ${output.schema ? JSON.stringify(output.schema) : '(none: a string)'}`,
  ];
}

function section(lines: string[], header: string, body: string[]): void {
  lines.push('', header, ...body);
}

function describeMcpServer(server: McpServerSpec): string {
  if (server.transport === 'stdio') {
    return `${server.name}: ${[server.command, ...redactArgs(server.args)].join(' ')} (stdio)`;
  }
  return `${server.name}: ${redactUrl(server.url)} (${server.transport})`;
}

/**
 * (axe) The tools that hand work to copies of the agent or a plan's sub-agents, and the limits each
 * of their children gets when neither its own file nor the call sets them.
 */
function delegatedLines(config: SubAgentsConfig): string[] {
  const tools = [config.spawn ? 'spawn_agents' : '', config.delegate ? 'delegate_task' : ''].filter(Boolean);
  if (tools.length === 0) return [];
  const limits = delegatedLimits(config);
  return [
    tools.join(', '),
    `Each child without limits of its own or from the call: ${limits.maxToolCalls} tool calls, ${limits.maxTokens} tokens, ${limits.timeoutSeconds}s`,
  ];
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
