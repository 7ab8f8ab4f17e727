import type { RunEvent, TraceLinks } from '../runner/events.js';

/**
 * A batch as one trace (its shape; the spans are made by `batch-spans.ts`, in the telemetry
 * bundle): a root span for the batch, a span per item under it, each item's run under its item.
 * This file loads nothing of OpenTelemetry: the batch room names these types only.
 */
export interface BatchTrace {
  /** An item that runs: its span starts now; its run's events go to `observe`. */
  item(item: { key: string; line: number }, time: number, runId: () => string | undefined): ItemTrace;
  /** An item that did not run (unreadable, or skipped by a cap): a span of no length, its status. */
  unran(item: { key: string; line: number; status: string; error: string | null }, time: number): void;
  /** The batch is over: its counts and why it stopped early, if it did. */
  end(summary: BatchTraceSummary, time: number): void;
}

export interface ItemTrace {
  /** The item run's trace links (its tools' processes continue its spans). */
  readonly links: TraceLinks;
  observe(event: RunEvent): void;
  end(result: { status: string; runId?: string; error: string | null }, time: number): void;
}

export interface BatchTraceSummary {
  total: number;
  completed: number;
  failed: number;
  skipped: number;
  stoppedBy?: string;
  /** The batch could not go on (its journal could not be written). */
  error?: string;
}
