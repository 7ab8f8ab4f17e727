import type { JsonValue } from '../provider/types.js';
import { treeUsage } from '../runner/result.js';
import type { RunOutcome } from '../runner/types.js';
import { maskSecrets } from '../secrets.js';
import type { BatchItem } from './items.js';

/** How an item ended: an agent outcome, `refused`, or `skipped` (a cap stopped the batch before it ran). */
export type ItemStatus =
  | 'completed'
  | 'error'
  | 'timeout'
  | 'max_turns'
  | 'budget_exceeded'
  | 'refused'
  | 'cancelled'
  | 'skipped';

/** Item ends that pass an item over rather than fail it: counted as `skipped`. */
const PASSED_OVER: ReadonlySet<ItemStatus> = new Set(['skipped', 'cancelled']);

/** Whether an item's end is a failure (for `--max-failures`, `--retries` and the exit code): not completed, nor passed over. */
export function isFailure(status: ItemStatus): boolean {
  return status !== 'completed' && !PASSED_OVER.has(status);
}

/** Counts a result as every batch does: completed, skipped (passed over), or failed. */
export function tally(
  counts: { completed: number; failed: number; skipped: number },
  status: ItemStatus,
): void {
  if (status === 'completed') counts.completed++;
  else if (PASSED_OVER.has(status)) counts.skipped++;
  else counts.failed++;
}

/** One item's line of output (and of the journal): every field always present, null when it has no value. */
export interface ResultLine {
  key: string;
  line: number;
  status: ItemStatus;
  answer: string | null;
  output: JsonValue | null;
  error: string | null;
  usage: { input_tokens: number; output_tokens: number };
  cost_usd: number | null;
  run_id: string | null;
  duration_ms: number;
}

export const RESULT_COLUMNS: readonly (keyof ResultLine)[] = [
  'key',
  'line',
  'status',
  'answer',
  'output',
  'error',
  'usage',
  'cost_usd',
  'run_id',
  'duration_ms',
];

/** The line of an item that did not run: it could not be read, or the batch stopped before it. */
export function unranLine(
  item: BatchItem,
  status: 'error' | 'skipped' | 'cancelled',
  error: string | null,
): ResultLine {
  return {
    key: item.key,
    line: item.line,
    status,
    answer: null,
    output: null,
    error,
    usage: { input_tokens: 0, output_tokens: 0 },
    cost_usd: null,
    run_id: null,
    duration_ms: 0,
  };
}

/** The line of an item that ran, from its run's outcome. */
export function resultLine(
  item: BatchItem,
  outcome: RunOutcome,
  runId: string | undefined,
  durationMs: number,
  costUsd: number | undefined,
): ResultLine {
  const { result } = outcome;
  const usage = treeUsage(result);
  const status: ItemStatus =
    result.refusal !== undefined && result.status === 'error' ? 'refused' : result.status;
  const error = outcome.error?.message ?? result.error;
  return {
    key: item.key,
    line: item.line,
    status,
    answer: result.content,
    output: result.output ?? null,
    error: error ?? null,
    usage: { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens },
    cost_usd: costUsd ?? null,
    run_id: runId ?? null,
    duration_ms: durationMs,
  };
}

/** A result as one line of `--out-format jsonl` (secrets masked, as in every output of axe). */
export function jsonLine(result: ResultLine): string {
  return `${maskSecrets(JSON.stringify(result))}\n`;
}

/** The CSV header row of `--out-format csv`. */
export function csvHeader(): string {
  return `${RESULT_COLUMNS.join(',')}\n`;
}

/** A result as one CSV row (RFC 4180): objects as JSON text, null as an empty field. */
export function csvLine(result: ResultLine): string {
  const fields = RESULT_COLUMNS.map((column) => {
    const value = result[column];
    if (value === null) return '';
    const text =
      typeof value === 'string' ? value : typeof value === 'number' ? String(value) : JSON.stringify(value);
    return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
  });
  return `${maskSecrets(fields.join(','))}\n`;
}
