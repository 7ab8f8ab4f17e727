import type { AgentSpec } from '../agent/spec.js';
import type { DryRunView } from '../output/dry-run.js';
import type { JsonValue } from '../provider/types.js';
import { resolveAgentRun } from '../runner/resolve.js';
import { CALL_AGENT_TOOL_NAME } from '../tools/types.js';

/** The run's overrides of the agent's own fields (`--model`, `--skill`, `--workdir`). */
export interface AgentOverrides {
  modelOverride?: string | undefined;
  skillOverride?: string | undefined;
  workdirOverride?: string | undefined;
}

/** What the agent gives `--dry-run`; the caller adds what the run itself decides. */
export type AgentDryRunView = Omit<
  DryRunView,
  'timeoutSeconds' | 'budgetMaxTokens' | 'stream' | 'userMessage' | 'defaultUserMessage'
>;

/**
 * What `--dry-run` shows: the agent as the runner would resolve it, without network or key. The
 * memory's warnings come back to be said, not said here.
 */
export async function dryRunView(
  spec: AgentSpec,
  context: { configDir: string; env: NodeJS.ProcessEnv },
  overrides: AgentOverrides,
  inputs: Record<string, JsonValue>,
): Promise<{ view: AgentDryRunView; warnings: string[] }> {
  const resolved = await resolveAgentRun(spec, {
    env: context.env,
    configDir: context.configDir,
    inputs,
    overrides: {
      model: overrides.modelOverride,
      skill: overrides.skillOverride,
      workdir: overrides.workdirOverride,
    },
  });
  const view: AgentDryRunView = {
    model: resolved.modelName,
    workdir: resolved.workdir,
    temperature: spec.params.temperature,
    maxTokens: spec.params.maxTokens,
    ...(spec.params.responseFormat ? { responseFormat: spec.params.responseFormat.type } : {}),
    systemPrompt: resolved.systemPrompt,
    ...(resolved.memory ? { memory: resolved.memory.entries } : {}),
    skill: resolved.skill?.content,
    files: resolved.files.map((file) => file.path),
    // Go axe's dry run lists the file's tools, without call_agent; other formats what is offered.
    ...(spec.format === 'toml'
      ? { tools: resolved.tools.filter((name) => name !== CALL_AGENT_TOOL_NAME) }
      : { tools: resolved.tools, offered: true }),
    mcpServers: spec.mcpServers,
    subAgents: spec.subAgents,
    subAgentsConfig: spec.subAgentsConfig,
    ...(spec.inputs.length > 0
      ? { inputs: spec.inputs.map((input) => ({ spec: input, value: resolved.inputs[input.name] })) }
      : {}),
    ...(spec.output ? { output: spec.output } : {}),
    more: moreLines(spec, resolved.query),
  };
  return { view, warnings: [...resolved.warnings, ...(resolved.memory?.warnings ?? [])] };
}

/**
 * The fields beyond Go's that the Go layout has no line for (a Codex definition maps onto most of
 * them); none for a Go-only file, whose dry run stays Go's.
 */
function moreLines(spec: AgentSpec, query: string | undefined): string[] {
  const { params, budget } = spec;
  const pairs = (entries: [string, number | undefined, string?][]): string =>
    entries
      .filter(([, value]) => value !== undefined)
      .map(([name, value, unit]) => `${name}=${value}${unit ?? ''}`)
      .join(', ');
  const paramsLine = pairs([
    ['top_p', params.topP],
    ['thinking_budget', params.thinkingBudget],
  ]);
  const budgetLine = pairs([
    ['max_turns', budget.maxTurns],
    ['max_tool_calls', budget.maxToolCalls],
    ['timeout', budget.timeout, 's'],
    ['grace_period', budget.gracePeriod, 's'],
  ]);
  return [
    ...(spec.dialect ? [`Format:       ${spec.dialect} definition`] : []),
    ...(spec.displayName !== undefined ? [`Display name: ${spec.displayName}`] : []),
    ...(query !== undefined ? [`Query:        ${query}`] : []),
    ...(paramsLine !== '' ? [`Params:       ${paramsLine}`] : []),
    ...(budgetLine !== '' ? [`Budget:       ${budgetLine}`] : []),
    ...(spec.forkContext ? ['Fork context: yes'] : []),
    ...(spec.tier !== undefined ? [`Tier:         ${spec.tier}`] : []),
    ...(spec.permissions.allow.length > 0 ? [`Allow:        ${spec.permissions.allow.join(', ')}`] : []),
    ...(spec.permissions.deny.length > 0 ? [`Deny:         ${spec.permissions.deny.join(', ')}`] : []),
    ...(spec.offersSubmit && !spec.output ? ['Submit:       submit_result (free text) / submit_error'] : []),
  ];
}
