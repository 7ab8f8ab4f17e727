import { defaultTextMapGetter, ROOT_CONTEXT } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { errorMessage } from '../errors.js';
import { VERSION } from '../version.js';
import { BatchSpans } from './batch-spans.js';
import type { BatchTrace } from './batch-trace.js';
import { LineSpanExporter } from './console-exporter.js';
import type { TraceSettings } from './settings.js';
import { SpanBuilder } from './spans.js';

/** How long the spans may take to leave once the run is over; then they are dropped, said once. */
export const FLUSH_BOUND_MS = 2000;

/** A traced run: the events go in, the spans go out when it closes. */
export interface RunTelemetry {
  readonly spans: SpanBuilder;
  /** Sends what is left, within FLUSH_BOUND_MS: a warning when the spans did not all leave. */
  close(): Promise<string | undefined>;
  /**
   * A batch as one trace: its root span (under the incoming TRACEPARENT, as a run's root), a span
   * per item, each item's run under its item's span.
   */
  batch(batch: { id: string; agent: string; items: number }): BatchTrace;
  /** Warnings about the settings (an incoming TRACEPARENT that is not one). */
  readonly warnings: readonly string[];
}

/**
 * The SDK, set up as the settings say, and the span builder it feeds. `parent`: the traceparent
 * the run's root span continues, when it is not the environment's (a batch's span of an item).
 */
export async function startTelemetry(
  settings: TraceSettings,
  options: {
    env: NodeJS.ProcessEnv;
    /**
     * The CLI's secret registry: this module runs from a bundle of its own (dist/telemetry.js),
     * which must not keep a second one.
     */
    secrets: { add: (value: string) => void; mask: (text: string) => string };
    write: (line: string) => void;
    runId?: () => string | undefined;
    propagate?: () => boolean;
    parent?: string;
  },
): Promise<RunTelemetry> {
  const warnings: string[] = [];
  maskHeaderValues(options.env, options.secrets.add);
  const exporters: SpanExporter[] = await Promise.all(
    settings.exporters.map((name) =>
      name === 'console' ? new LineSpanExporter(options.write) : otlpExporter(settings),
    ),
  );
  const resource = resourceFromAttributes({ 'service.name': 'axe', 'service.version': VERSION }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: exporters.map(
      (exporter) =>
        new BatchSpanProcessor(exporter, {
          // The run's spans leave together at its end, unless there are very many.
          maxQueueSize: 65536,
          maxExportBatchSize: 4096,
          scheduledDelayMillis: 5000,
          exportTimeoutMillis: FLUSH_BOUND_MS,
        }),
    ),
  });
  const incoming = options.parent ?? settings.incoming?.traceparent;
  const parent = incoming !== undefined ? parentContext(incoming, settings.incoming?.tracestate) : undefined;
  if (incoming !== undefined && parent === undefined) {
    warnings.push(`TRACEPARENT: "${incoming}" is not a W3C traceparent: the run starts a trace of its own`);
  }
  const tracer = provider.getTracer('axe', VERSION);
  const builderOptions = {
    captureContent: settings.captureContent,
    mask: options.secrets.mask,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.propagate !== undefined ? { propagate: options.propagate } : {}),
  };
  const spans = new SpanBuilder(tracer, { ...builderOptions, ...(parent ? { parent } : {}) });
  return {
    spans,
    batch: (batch) =>
      new BatchSpans(tracer, batch, {
        ...(parent ? { parent } : {}),
        mask: options.secrets.mask,
        runSpans: (under, runId) => new SpanBuilder(tracer, { ...builderOptions, parent: under, runId }),
      }),
    warnings,
    close: () => flushWithin(provider, settings, FLUSH_BOUND_MS),
  };
}

async function otlpExporter(settings: TraceSettings): Promise<SpanExporter> {
  // Loaded only for the protocol asked for: each brings its own serialiser. A request that hangs
  // is given up within the flush's bound, so that it does not keep the process alive after it.
  const config = { timeoutMillis: FLUSH_BOUND_MS };
  if (settings.protocol === 'http/json') {
    return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter(config);
  }
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter(config);
}

/** The context of a valid incoming traceparent (and tracestate), else undefined. */
function parentContext(traceparent: string, tracestate: string | undefined) {
  const carrier: Record<string, string> = { traceparent, ...(tracestate ? { tracestate } : {}) };
  const context = new W3CTraceContextPropagator().extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  return context === ROOT_CONTEXT ? undefined : context;
}

/** OTLP header values (an `Authorization` token, an API key) are secrets wherever axe writes. */
function maskHeaderValues(env: NodeJS.ProcessEnv, addSecret: (value: string) => void): void {
  for (const name of ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS']) {
    for (const pair of env[name]?.split(',') ?? []) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const value = pair.slice(eq + 1).trim();
      let decoded = value;
      try {
        decoded = decodeURIComponent(value);
      } catch {
        // Not URL-encoded: masked as written.
      }
      // `Bearer <token>`: the token on its own too.
      for (const secret of [value, decoded, ...decoded.split(/\s+/)]) addSecret(secret);
    }
  }
}

async function flushWithin(
  provider: BasicTracerProvider,
  settings: TraceSettings,
  boundMs: number,
): Promise<string | undefined> {
  const where = settings.exporters.includes('otlp') ? ` to ${settings.endpoint}` : '';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(`traces: the spans could not be sent${where} within ${boundMs / 1000} s: they are dropped`),
      boundMs,
    );
    timer.unref();
  });
  const flushed = provider.forceFlush().then(
    () => undefined,
    (error: unknown) =>
      `traces: the spans could not be sent${where} (${errorMessage(error)}): they are dropped`,
  );
  try {
    return await Promise.race([flushed, late]);
  } finally {
    clearTimeout(timer);
  }
}
