import { readPipedStdin, stdinHasData, stdinIsPiped } from '../fs/stdin.js';
import type { VerboseRunInfo } from '../output/verbose.js';

/** Sent when neither `-p` nor piped stdin gives a user message (Go axe's words). */
export const DEFAULT_USER_MESSAGE = 'Execute the task described in your instructions.';

/** What the caller gave for the message: `-p`'s text (a blank one is none) and `--stdin-append`. */
export interface GivenMessage {
  prompt: string | undefined;
  append: boolean;
}

/** How long reading stdin may take: the run's signal and deadline. */
export interface StdinWait {
  signal: AbortSignal;
  deadlineAt: number;
  timeoutSeconds: number;
}

/**
 * The user message, Go axe's rule: `-p` wins, else piped stdin, else the default message. Says
 * through `warn` when that rule drops something: an empty stdin, or a stdin that `-p` made axe
 * ignore (`append` sends both: the `-p` text, a blank line, then stdin).
 */
export async function userMessage(
  given: GivenMessage,
  wait: StdinWait,
  warn: (message: string) => void,
): Promise<{ input: string; source: VerboseRunInfo['promptSource'] }> {
  const { prompt, append } = given;
  if (prompt !== undefined && !append) {
    if (stdinHasData()) warn('piped stdin ignored because -p was given (--stdin-append sends both)');
    return { input: prompt, source: 'flag' };
  }
  const stdin = await readPipedStdin(wait.signal, wait.deadlineAt, wait.timeoutSeconds);
  const piped = stdin !== undefined && stdin.trim() !== '' ? stdin : undefined;
  if (prompt !== undefined) {
    return { input: piped === undefined ? prompt : `${prompt}\n\n${piped}`, source: 'flag' };
  }
  if (stdin !== undefined && piped === undefined && stdinIsPiped()) {
    warn('piped stdin is empty: sending the default message');
  }
  return piped === undefined
    ? { input: DEFAULT_USER_MESSAGE, source: 'default' }
    : { input: piped, source: 'stdin' };
}
