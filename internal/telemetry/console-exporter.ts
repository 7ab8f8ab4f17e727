import type { ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * `OTEL_TRACES_EXPORTER=console`: each span as one JSON line through `write` (the CLI's stderr:
 * stdout is the answer's). Its fields are those of the SDK's own console exporter.
 */
export class LineSpanExporter implements SpanExporter {
  constructor(private readonly write: (line: string) => void) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    for (const span of spans) {
      const context = span.spanContext();
      this.write(
        `${JSON.stringify({
          traceId: context.traceId,
          parentSpanId: span.parentSpanContext?.spanId,
          spanId: context.spanId,
          name: span.name,
          kind: span.kind,
          startTime: hrTimeMs(span.startTime),
          durationMs: hrTimeMs(span.duration),
          attributes: span.attributes,
          status: span.status,
          events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
        })}\n`,
      );
    }
    done({ code: 0 });
  }

  async shutdown(): Promise<void> {}
}

function hrTimeMs([seconds, nanos]: [number, number]): number {
  return seconds * 1000 + Math.round(nanos / 1e6);
}
