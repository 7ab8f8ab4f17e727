import type { SubAgentsConfig } from './spec.js';

/**
 * The limits of delegated work — a `spawn_agents` worker or a `delegate_task` sub-task — when
 * nothing else sets one: neither the child's own `[budget]`, nor the call's arguments, nor its
 * caller's `[sub_agents_config]`. A looping worker then stops with its answer so far instead of
 * running its 50 turns until the run's deadline.
 *
 * 15 tool calls is what the reference systems give a delegated task. Their 8,192 tokens count one
 * answer; axe counts the input and output of every turn (a turn re-sends the conversation so far),
 * so the cap here is larger: enough for 15 turns over a moderate context. Their 60 s fits a local
 * model; real providers often take longer for 15 turns, hence 300 s.
 */
export const DELEGATED_DEFAULTS = { maxToolCalls: 15, maxTokens: 200_000, timeoutSeconds: 300 } as const;

/**
 * The limits a delegated child gets from its caller unless its own or the call's say otherwise:
 * `[sub_agents_config]`'s when set, else the defaults. (`--dry-run` shows these.)
 */
export function delegatedLimits(config: SubAgentsConfig): {
  maxToolCalls: number;
  maxTokens: number;
  timeoutSeconds: number;
} {
  return {
    maxToolCalls: config.childMaxToolCalls ?? DELEGATED_DEFAULTS.maxToolCalls,
    maxTokens: config.childMaxTokens ?? DELEGATED_DEFAULTS.maxTokens,
    timeoutSeconds: config.timeout > 0 ? config.timeout : DELEGATED_DEFAULTS.timeoutSeconds,
  };
}
