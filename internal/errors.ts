/**
 * Typed errors. Every error that reaches the CLI carries the exit code it stands for, so `cmd/`
 * only has to print `message` and exit with `exitCode`.
 *
 *   0 ok · 1 runtime · 2 config · 3 provider / network · 4 budget · 129 SIGHUP · 130 SIGINT ·
 *   141 stdout's reader went away (EPIPE, as for SIGPIPE) · 143 SIGTERM
 */
export const ExitCode = {
  ok: 0,
  runtime: 1,
  config: 2,
  provider: 3,
  budget: 4,
  sighup: 129,
  sigint: 130,
  sigpipe: 141,
  sigterm: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export class AxeError extends Error {
  readonly exitCode: ExitCode;
  constructor(message: string, exitCode: ExitCode, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.exitCode = exitCode;
  }
}

/** Bad agent file, config file, flag or argument (exit 2). */
export class ConfigError extends AxeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.config, options);
  }
}

/** A provider's required API key is not set (exit 2 for `run`; Go axe's `gc` says 3). */
export class MissingKeyError extends ConfigError {}

/** A run that failed for a reason that is not the provider's: turn limit, tool failure (exit 1). */
export class RuntimeError extends AxeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, ExitCode.runtime, options);
  }
}

/** The model declined, or a safety system blocked its answer, and there is no answer (exit 1). */
export class RefusalError extends RuntimeError {}

/** The agent used all its turns and still called tools (exit 1, Go axe's error). */
export class TurnLimitError extends RuntimeError {}

/** A broken invariant of axe itself (a bug, never the user's input): exit 1. */
export class InternalError extends RuntimeError {}

/** The run itself succeeded, but its `--record` cassette could not be written (exit 1, after the answer). */
export class RecordingError extends RuntimeError {}

/** The tree-wide token budget ran out (exit 4). */
export class BudgetError extends AxeError {
  readonly used: number;
  readonly limit: number;
  /** What `used` and `limit` count: tokens, or US dollars of a cost cap. */
  readonly unit: 'tokens' | 'usd';
  constructor(used: number, limit: number, unit: 'tokens' | 'usd' = 'tokens') {
    super(
      unit === 'usd'
        ? `budget exceeded: used $${used.toFixed(4)} of $${limit}`
        : `budget exceeded: used ${used} of ${limit} tokens`,
      ExitCode.budget,
    );
    this.used = used;
    this.limit = limit;
    this.unit = unit;
  }
}

/** A call that would have to be priced under a cost cap, to a model with no known price. */
export class UnpricedModelError extends AxeError {
  constructor(model: string) {
    super(
      `no price known for ${model}, so a cost cap cannot be kept: add [prices."${model}"] input = …, output = … (USD per million tokens) to config.toml`,
      ExitCode.config,
    );
  }
}

export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP';

/** The exit code of a run a signal stopped: 128 + the signal's number, as a shell reports it. */
export function signalExitCode(signal: StopSignal): ExitCode {
  return signal === 'SIGTERM' ? ExitCode.sigterm : signal === 'SIGHUP' ? ExitCode.sighup : ExitCode.sigint;
}

/** The user stopped the run (SIGINT → 130, SIGTERM → 143, SIGHUP → 129). */
export class CancelledError extends AxeError {
  readonly signal: StopSignal | undefined;
  constructor(message = 'cancelled', signal?: StopSignal) {
    super(message, signalExitCode(signal ?? 'SIGINT'));
    this.signal = signal;
  }
}

export type ProviderErrorCategory =
  | 'auth'
  | 'rate_limit'
  | 'overloaded'
  | 'bad_request'
  | 'server'
  | 'timeout'
  | 'cancelled';

export interface ProviderErrorDetails {
  category: ProviderErrorCategory;
  provider: string;
  status?: number;
  requestId?: string;
  /** The provider's own error message, verbatim. */
  providerMessage?: string;
  /** Server-requested wait before a retry (retry-after / retry-after-ms), in ms. */
  retryAfterMs?: number;
  /** `x-should-retry` when the server sent it. */
  shouldRetry?: boolean;
  /** Retries made before this error ended the call (absent: none). */
  retries?: number;
  /**
   * The exit code where Go axe's differs from the category's: a 4xx it counts as a server error
   * (exit 3), which axe still names for what it is and does not retry.
   */
  exitCode?: ExitCode;
}

/**
 * An error from a provider call. Exit 1 for bad_request (the Go axe contract), 130 for a user
 * cancel, 3 for everything else (or `details.exitCode`).
 */
export class ProviderError extends AxeError {
  readonly details: ProviderErrorDetails;
  constructor(message: string, details: ProviderErrorDetails, options?: { cause?: unknown }) {
    super(message, details.exitCode ?? exitCodeFor(details.category), options);
    this.details = details;
  }
  get category(): ProviderErrorCategory {
    return this.details.category;
  }
}

function exitCodeFor(category: ProviderErrorCategory): ExitCode {
  if (category === 'bad_request') return ExitCode.runtime;
  if (category === 'cancelled') return ExitCode.sigint;
  return ExitCode.provider;
}

export function isAxeError(error: unknown): error is AxeError {
  return error instanceof AxeError;
}

/** The message of anything thrown (`Error` or not). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
