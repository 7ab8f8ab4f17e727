/** Where a batch stands: what a progress line shows and the last line sums up. */
export interface BatchCounts {
  total: number;
  done: number;
  completed: number;
  failed: number;
  skipped: number;
  running: number;
  tokens: number;
  cost?: number;
  startedAt: number;
}

export function emptyCounts(total: number, startedAt: number): BatchCounts {
  return { total, done: 0, completed: 0, failed: 0, skipped: 0, running: 0, tokens: 0, startedAt };
}

/** The one progress line: done / failed / running / queued, items per minute, ETA, tokens, cost. */
export function progressLine(counts: BatchCounts, now: number): string {
  const minutes = Math.max(now - counts.startedAt, 1) / 60_000;
  const rate = counts.done / minutes;
  const queued = Math.max(counts.total - counts.done - counts.running, 0);
  const left = counts.total - counts.done;
  const eta = rate > 0 ? `ETA ${duration((left / rate) * 60_000)}` : 'ETA –';
  const cost = counts.cost !== undefined ? `, $${counts.cost.toFixed(4)}` : '';
  return `${counts.done}/${counts.total} done, ${counts.failed} failed, ${counts.running} running, ${queued} queued · ${rate.toFixed(1)}/min · ${eta} · ${counts.tokens} tokens${cost}`;
}

function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
