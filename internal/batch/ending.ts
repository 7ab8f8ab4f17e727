import { ExitCode, type StopSignal, signalExitCode } from '../errors.js';

/** How a batch ended, as its last line on stderr tells it, whether it ran here or on workers. */
export interface BatchEnd {
  id: string;
  counts: { completed: number; failed: number; skipped: number };
  /** The cap that stopped it (`--max-cost`, `--max-tokens`, `--max-failures`). */
  stoppedBy?: string;
  /** `axe batches cancel` ended it (a batch on a queue). */
  cancelled?: boolean;
  /** A signal stopped this process before the batch was over. */
  signal?: StopSignal;
  /** What happened to the batch after that signal, in the user's words. */
  interruptedNote?: string;
  /** `--record` could not publish its cassette. */
  recordError?: string;
  /** Added to the `axe batches …` commands the line suggests (a queue's `--queue`). */
  commandSuffix?: string;
}

/** The batch's last lines for stderr and its exit code: a cap → 4, a failed item → 1, all done → 0. */
export function batchEnding(end: BatchEnd): { lines: string[]; code: number } {
  const { id, counts } = end;
  const suffix = end.commandSuffix ?? '';
  const tally = `${counts.completed} completed, ${counts.failed} failed${counts.skipped > 0 ? `, ${counts.skipped} skipped` : ''}`;
  if (end.signal !== undefined) {
    const note = end.interruptedNote ?? `interrupted: ${tally} (axe batches resume ${id}${suffix})`;
    return { lines: [`axe: batch ${id}: ${note}`], code: signalExitCode(end.signal) };
  }
  if (end.cancelled === true) {
    return { lines: [`axe: batch ${id}: cancelled: ${tally}`], code: ExitCode.runtime };
  }
  if (end.stoppedBy !== undefined) {
    return {
      lines: [`axe: batch ${id}: stopped by ${end.stoppedBy}: ${tally} (axe batches resume ${id}${suffix})`],
      code: ExitCode.budget,
    };
  }
  const lines = end.recordError ? [`axe: ${end.recordError}`] : [];
  if (counts.failed > 0) {
    lines.push(`axe: batch ${id}: ${tally} (see axe batches show ${id}${suffix})`);
    return { lines, code: ExitCode.runtime };
  }
  lines.push(`axe: batch ${id}: ${tally}`);
  return { lines, code: end.recordError ? ExitCode.runtime : ExitCode.ok };
}
