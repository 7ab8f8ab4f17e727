import { CassetteMissError } from '../cassette/cassette.js';
import {
  AxeError,
  BudgetError,
  CancelledError,
  ConfigError,
  ExitCode,
  errorMessage,
  InternalError,
  MissingKeyError,
  ProviderError,
  RecordingError,
  RefusalError,
  TurnLimitError,
} from '../errors.js';
import { LimitReachedError } from '../runner/limits.js';
import { maskSecrets } from '../secrets.js';

/** How `--json` names a failure: what kind of thing went wrong, what it says, and the exit code. */
export interface JsonError {
  kind: JsonErrorKind;
  message: string;
  exit_code: number;
}

export type JsonErrorKind =
  | 'config'
  | 'missing_key'
  | 'provider'
  | 'timeout'
  | 'replay_miss'
  | 'budget'
  | 'turn_limit'
  | 'refusal'
  | 'cancelled'
  | 'recording'
  | 'runtime'
  | 'internal';

/** Anything thrown, as `--json`'s `error`: its kind from its class (not from its words). */
export function jsonError(thrown: unknown): JsonError {
  const exitCode = thrown instanceof AxeError ? thrown.exitCode : ExitCode.runtime;
  return { kind: kindOf(thrown), message: maskSecrets(errorMessage(thrown)), exit_code: exitCode };
}

function kindOf(error: unknown): JsonErrorKind {
  if (!(error instanceof AxeError) || error instanceof InternalError) return 'internal';
  if (error instanceof MissingKeyError) return 'missing_key';
  if (error instanceof ConfigError) return 'config';
  if (error instanceof CassetteMissError) return 'replay_miss';
  if (error instanceof ProviderError) {
    if (error.category === 'timeout') return 'timeout';
    return error.category === 'cancelled' ? 'cancelled' : 'provider';
  }
  if (error instanceof BudgetError) return 'budget';
  if (error instanceof LimitReachedError) return error.status === 'budget_exceeded' ? 'budget' : 'turn_limit';
  if (error instanceof TurnLimitError) return 'turn_limit';
  if (error instanceof RefusalError) return 'refusal';
  if (error instanceof CancelledError) return 'cancelled';
  if (error instanceof RecordingError) return 'recording';
  return 'runtime';
}
