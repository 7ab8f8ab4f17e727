import { AxeError, ExitCode } from '../errors.js';

/**
 * An agent run's own limits (`[budget] max_tool_calls` / `max_turns`, a parent's
 * `[sub_agents_config]` defaults). Tool calls and turns are the agent's own: a child's calls do
 * not count against its parent's `max_tool_calls`, and a parent's limit does not cut its children
 * (each has its own). Tokens nest: a child's tokens also count in every enclosing scope that caps
 * them, so a delegated task's `max_tokens` covers the agents it starts in turn.
 */
export class LimitScope {
  private toolCalls = 0;
  private tokens = 0;

  constructor(
    readonly limits: { maxToolCalls?: number; maxTokens?: number; maxTurns?: number } = {},
    private readonly parent?: LimitScope,
  ) {}

  /** A child scope: its own limits; its tokens also count in this one. */
  child(limits: LimitScope['limits']): LimitScope {
    return new LimitScope(limits, this);
  }

  /** Takes one of this agent's own tool calls; false when it has none left. */
  takeToolCall(): boolean {
    if (this.stop('toolCalls')) return false;
    this.toolCalls++;
    return true;
  }

  addTokens(count: number): void {
    for (let scope: LimitScope | undefined = this; scope; scope = scope.parent) scope.tokens += count;
  }

  /** Why no further tool call (`toolCalls`) or model call (`tokens`) may start, when one cannot. */
  stop(what: 'toolCalls' | 'tokens'): LimitReachedError | undefined {
    if (what === 'toolCalls') return this.spent('toolCalls', this.limits.maxToolCalls, this.toolCalls);
    for (let scope: LimitScope | undefined = this; scope; scope = scope.parent) {
      const spent = this.spent('tokens', scope.limits.maxTokens, scope.tokens);
      if (spent) return spent;
    }
    return undefined;
  }

  private spent(
    what: 'toolCalls' | 'tokens',
    limit: number | undefined,
    used: number,
  ): LimitReachedError | undefined {
    if (limit === undefined || used < limit) return undefined;
    const unit = what === 'toolCalls' ? 'tool calls' : 'tokens';
    return new LimitReachedError('budget_exceeded', `budget exceeded — ${used} of ${limit} ${unit}`);
  }
}

/**
 * An agent stopped by one of its own limits: not a failure but a normal completion: it ends
 * with its answer so far. At the top level it is still a non-zero exit: 4 for a budget, 1 for turns.
 */
export class LimitReachedError extends AxeError {
  constructor(
    readonly status: 'budget_exceeded' | 'max_turns',
    /** `budget exceeded — 15 of 15 tool calls`, `turn limit — 5 of 5 turns`. */
    readonly detail: string,
  ) {
    super(detail, status === 'budget_exceeded' ? ExitCode.budget : ExitCode.runtime);
  }
}
