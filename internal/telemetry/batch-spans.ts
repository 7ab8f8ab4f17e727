import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { BatchTrace, BatchTraceSummary, ItemTrace } from './batch-trace.js';
import type { SpanBuilder } from './spans.js';

/** Item statuses that are not failures: the item answered, or never ran to the end. */
const NOT_FAILED = new Set(['completed', 'skipped', 'cancelled']);

/**
 * A batch as one trace: `axe.batch {agent}` at the root (under an incoming TRACEPARENT), an
 * `axe.batch.item` span per item under it, and each item's run (`invoke_agent` and below) under
 * its item's span. The root counts the items by status.
 */
export class BatchSpans implements BatchTrace {
  private readonly root: Span;
  private readonly context: Context;
  private readonly statuses = new Map<string, number>();

  constructor(
    private readonly tracer: Tracer,
    batch: { id: string; agent: string; items: number },
    private readonly options: {
      parent?: Context;
      mask: (text: string) => string;
      /** How each item's run is read into spans, under the context given. */
      runSpans: (parent: Context, runId: () => string | undefined) => SpanBuilder;
    },
  ) {
    const parent = options.parent ?? ROOT_CONTEXT;
    this.root = tracer.startSpan(
      `axe.batch ${batch.agent}`,
      {
        attributes: {
          'axe.batch.id': batch.id,
          'axe.batch.items': batch.items,
          'gen_ai.agent.name': batch.agent,
        },
      },
      parent,
    );
    this.context = trace.setSpan(parent, this.root);
  }

  item(item: { key: string; line: number }, time: number, runId: () => string | undefined): ItemTrace {
    const span = this.startItem(item, time);
    const spans = this.options.runSpans(trace.setSpan(this.context, span), runId);
    return {
      links: spans,
      observe: (event) => spans.observe(event),
      end: (result, end) => this.endItem(span, result, end),
    };
  }

  unran(item: { key: string; line: number; status: string; error: string | null }, time: number): void {
    this.endItem(this.startItem(item, time), item, time);
  }

  end(summary: BatchTraceSummary, time: number): void {
    const attributes: Attributes = {
      'axe.batch.completed': summary.completed,
      'axe.batch.failed': summary.failed,
      'axe.batch.skipped': summary.skipped,
      ...(summary.stoppedBy !== undefined ? { 'axe.batch.stopped_by': summary.stoppedBy } : {}),
    };
    for (const [status, count] of this.statuses) attributes[`axe.batch.status.${status}`] = count;
    this.root.setAttributes(attributes);
    if (summary.error !== undefined || summary.failed > 0) {
      this.root.setAttribute('error.type', summary.error !== undefined ? 'error' : 'items_failed');
      this.root.setStatus({
        code: SpanStatusCode.ERROR,
        message: this.options.mask(summary.error ?? `${summary.failed} of ${summary.total} items failed`),
      });
    }
    this.root.end(time);
  }

  private startItem(item: { key: string; line: number }, time: number): Span {
    return this.tracer.startSpan(
      'axe.batch.item',
      {
        attributes: { 'axe.batch.item.key': this.options.mask(item.key), 'axe.batch.item.line': item.line },
        startTime: time,
      },
      this.context,
    );
  }

  private endItem(
    span: Span,
    result: { status: string; runId?: string; error: string | null },
    time: number,
  ): void {
    this.statuses.set(result.status, (this.statuses.get(result.status) ?? 0) + 1);
    span.setAttributes({
      'axe.batch.item.status': result.status,
      ...(result.runId !== undefined ? { 'axe.run.id': result.runId } : {}),
    });
    if (!NOT_FAILED.has(result.status)) {
      span.setAttribute('error.type', result.status);
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(result.error !== null ? { message: this.options.mask(result.error) } : {}),
      });
    }
    span.end(time);
  }
}
