import { AxeError, ExitCode } from '../errors.js';

/**
 * An agent run's own limits (`[budget] max_tool_calls` / `max_turns`, a parent's
 * `[sub_agents_config]` defaults), nested: a child's tool calls and tokens also count in every
 * enclosing scope, so a child can never spend more than what its ancestors have left.
 */
export class LimitScope {
  private toolCalls = 0;
  private tokens = 0;

  constructor(
    readonly limits: { maxToolCalls?: number; maxTokens?: number; maxTurns?: number } = {},
    private readonly parent?: LimitScope,
  ) {}

  /** A child scope: its own limits, within this one's remainder. */
  child(limits: LimitScope['limits']): LimitScope {
    return new LimitScope(limits, this);
  }

  /** Takes one tool call from this scope and every enclosing one; false when any has none left. */
  takeToolCall(): boolean {
    if (this.stop('toolCalls')) return false;
    for (let scope: LimitScope | undefined = this; scope; scope = scope.parent) scope.toolCalls++;
    return true;
  }

  addTokens(count: number): void {
    for (let scope: LimitScope | undefined = this; scope; scope = scope.parent) scope.tokens += count;
  }

  /** Why no further tool call (`toolCalls`) or model call (`tokens`) may start, when one cannot. */
  stop(what: 'toolCalls' | 'tokens'): LimitReachedError | undefined {
    for (let scope: LimitScope | undefined = this; scope; scope = scope.parent) {
      const limit = what === 'toolCalls' ? scope.limits.maxToolCalls : scope.limits.maxTokens;
      const used = what === 'toolCalls' ? scope.toolCalls : scope.tokens;
      if (limit !== undefined && used >= limit) {
        const unit = what === 'toolCalls' ? 'tool calls' : 'tokens';
        return new LimitReachedError('budget_exceeded', `budget exceeded — ${used} of ${limit} ${unit}`);
      }
    }
    return undefined;
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
