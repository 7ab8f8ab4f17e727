/**
 * The runner's public API (used by cmd/run.ts and bench/).
 *
 *   runTopLevel(request: RunRequest): Promise<RunOutcome>
 *     A whole run: HTTP pool, deadline (request.timeoutSeconds, combined with request.signal),
 *     tree-wide budget (request.maxTokens; 0/undefined = unlimited), run-wide FIFO limiter
 *     (top-level `max_parallel` > env AXE_MAX_PARALLEL > 64), cassette (request.record /
 *     request.replay; replay needs no key and constructs no real provider). It does not throw for
 *     a failed run: `outcome.error` is the typed AxeError (its exitCode: 1 turn limit, 2 config,
 *     3 provider / timeout / cassette miss, 4 budget, 130/143 = request.signal's CancelledError)
 *     and `outcome.result.content` the answer so far. Everything it opened is closed on return.
 *     Events (request.emit), each with path / agent / depth / time:
 *       agent.start, agent.end  — every agent of the tree, in the order they start / end (a
 *                                 sub-agent's start names its caller's tool call); agent.end
 *                                 carries the outcome: status completed | budget_exceeded |
 *                                 timeout | max_turns | cancelled | error, answer, usage
 *       agent.ready             — an agent resolved: its system prompt and the tools offered
 *       message                 — each message of an agent's conversation, as sent and received
 *       question                — a sub-agent's ask_parent question and its answer, on the answerer
 *       turn.start, turn.end, tool.start, tool.end, retry — every agent of the tree
 *       text.delta              — when request.stream: depth 0, and the sub-agents that stream
 *                                 (not a Go TOML file started by call_agent)
 *       mcp, warning            — MCP connection lines and warnings of the agents' toolsets
 *
 *   resolveAgentRun(spec: AgentSpec, options: ResolveOptions): Promise<ResolvedAgentRun>
 *     What a run of `spec` uses — model, absolute workdir, the full system prompt, skill (path and
 *     content), context files, memory, tool names, whether call_agent is offered — with no network
 *     and no key. Pass `overrides: { model, skill, workdir }` from the flags, `configDir` and `env`
 *     (for the memory file). The run
 *     uses this same function, so `--dry-run` and the run never disagree. Throws ConfigError.
 *
 *   effectiveMaxParallel(spec: AgentSpec, env: NodeJS.ProcessEnv): number
 *   buildSystemPrompt(systemPrompt: string, skill: string, files: ContextFile[]): string
 */

export { shorterTimeout } from './context.js';
export type { AgentStatus, EmitEvent, RunEvent } from './events.js';
export { effectiveMaxParallel } from './limiter.js';
export { buildSystemPrompt, type ContextFile } from './prompt.js';
export { type ResolvedAgentRun, type ResolveOptions, resolveAgentRun } from './resolve.js';
export { runTopLevel } from './top-level.js';
export type { AgentRunResult, RunOutcome, RunRequest, ToolCallDetail } from './types.js';
