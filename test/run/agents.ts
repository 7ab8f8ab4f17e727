import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';

/** Agent files for the e2e tests. Each agent's system prompt starts with `ROLE:<name>` for routing. */
export interface AgentOptions {
  model?: string;
  subAgents?: string[];
  /** Lines of the `[sub_agents_config]` table, e.g. `['parallel = false', 'timeout = 1']`. */
  subAgentsConfig?: string[];
  /** Extra top-level TOML lines. */
  extra?: string[];
}

export function agentToml(name: string, options: AgentOptions = {}): string {
  const lines = [
    `name = "${name}"`,
    `model = "${options.model ?? 'anthropic/claude-test'}"`,
    `system_prompt = "ROLE:${name}"`,
    ...(options.extra ?? []),
  ];
  if (options.subAgents) lines.push(`sub_agents = [${options.subAgents.map((a) => `"${a}"`).join(', ')}]`);
  if (options.subAgentsConfig) lines.push('', '[sub_agents_config]', ...options.subAgentsConfig);
  return `${lines.join('\n')}\n`;
}

/** The agent a recorded request came from (by its `ROLE:` system prompt). */
export function roleOf(request: { system: string }): string {
  return /ROLE:([\w-]+)/.exec(request.system)?.[1] ?? '';
}

export const callAgent = (agent: string, task: string, context?: string) => ({
  name: 'call_agent',
  arguments: context === undefined ? { agent, task } : { agent, task, context },
});

/** A parent that delegates once (the given calls) and then answers with `final`. */
export function delegatingParent(
  calls: ReturnType<typeof callAgent>[],
  final = 'done',
): (r: RecordedRequest) => ScriptedReply {
  return (request) =>
    request.toolResults.length === 0
      ? { toolCalls: calls, usage: { input: 100, output: 10 } }
      : { text: final, usage: { input: 200, output: 20 } };
}

/**
 * For replies that must overlap: `arrive()` resolves once `count` requests have called it, so the
 * server answers none of them before it has them all. Were they sent one after another, the first
 * would wait in vain: after `fallbackMs` all are let go, for the test to fail on its order checks
 * (the server's own receivedAt/finishedAt) rather than hang. No margin a busy machine can miss.
 */
export function allArrived(count: number, fallbackMs = 10_000): { arrive(): Promise<void> } {
  let arrived = 0;
  let release: () => void = () => {};
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    arrive: () => {
      arrived++;
      if (arrived === 1) setTimeout(release, fallbackMs).unref();
      if (arrived === count) release();
      return gate;
    },
  };
}
