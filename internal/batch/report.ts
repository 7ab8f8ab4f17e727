import { statSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_FILE, readJournal } from './journal.js';
import type { ResultLine } from './result-line.js';
import type { BatchRecord } from './store.js';

/** What `axe batches show` and `list` tell of a batch, from its record and its journal. */
export interface BatchReport {
  id: string;
  agent: string;
  input: string;
  created_at: string;
  items: number;
  /** Journaled results by status; items with none are `pending`. */
  counts: Record<string, number>;
  usage: { input_tokens: number; output_tokens: number };
  cost_usd: number | null;
  /** From the batch's start to its last journaled result. */
  elapsed_ms: number;
  failed: { key: string; line: number; status: string; error: string | null }[];
}

export async function batchReport(
  dir: string,
  record: BatchRecord,
): Promise<{ report: BatchReport; results: ResultLine[] }> {
  const journaled = await readJournal(join(dir, record.id));
  const results = [...journaled.values()].sort((a, b) => a.line - b.line);
  const counts: Record<string, number> = {};
  let input = 0;
  let output = 0;
  let cost: number | null = null;
  for (const result of results) {
    counts[result.status] = (counts[result.status] ?? 0) + 1;
    input += result.usage.input_tokens;
    output += result.usage.output_tokens;
    if (result.cost_usd !== null) cost = (cost ?? 0) + result.cost_usd;
  }
  const pending = record.input.items - results.length;
  if (pending > 0) counts.pending = pending;
  let last = Date.parse(record.createdAt);
  try {
    last = statSync(join(dir, record.id, JOURNAL_FILE)).mtimeMs;
  } catch {
    // No item finished yet.
  }
  const report: BatchReport = {
    id: record.id,
    agent: record.agent,
    input: record.input.stdin ? '-' : record.input.file,
    created_at: record.createdAt,
    items: record.input.items,
    counts,
    usage: { input_tokens: input, output_tokens: output },
    cost_usd: cost,
    elapsed_ms: Math.max(0, Math.round(last - Date.parse(record.createdAt))),
    failed: results
      .filter((result) => result.status !== 'completed')
      .map(({ key, line, status, error }) => ({ key, line, status, error })),
  };
  return { report, results };
}

/** `axe batches show`: the counts, tokens, cost, elapsed time and the failed items. */
export function renderReport(report: BatchReport): string {
  const counts = Object.entries(report.counts)
    .map(([status, count]) => `${count} ${status}`)
    .join(', ');
  const cost = report.cost_usd !== null ? `, $${report.cost_usd.toFixed(4)}` : '';
  const lines = [
    `batch ${report.id}: ${report.agent} over ${report.input} (${report.items} items), started ${report.created_at}`,
    `  ${counts || 'nothing finished yet'}`,
    `  tokens: ${report.usage.input_tokens} in, ${report.usage.output_tokens} out${cost}; elapsed ${(report.elapsed_ms / 1000).toFixed(1)}s`,
  ];
  for (const item of report.failed) {
    lines.push(`  line ${item.line} (key ${item.key}): ${item.status}${item.error ? `: ${item.error}` : ''}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `axe batches list`: one line per batch, newest first; `state` adds a column before the input
 * (a batch on a queue: running, stopped, cancelled, done).
 */
export function renderList<R extends BatchReport>(
  reports: readonly R[],
  state?: (report: R) => string,
): string {
  if (reports.length === 0) return 'no batches\n';
  return reports
    .map((report) => {
      let done = 0;
      let failed = 0;
      for (const [status, count] of Object.entries(report.counts)) {
        if (status === 'pending') continue;
        done += count;
        if (status !== 'completed') failed += count;
      }
      const column = state ? `  ${state(report)}` : '';
      return `${report.id}  ${report.agent}  ${done}/${report.items} done, ${failed} failed${column}  ${report.input}`;
    })
    .join('\n')
    .concat('\n');
}
