/**
 * Whether a run is traced, read from OpenTelemetry's standard variables only. This file loads no
 * OpenTelemetry package: a run that exports nothing pays for a few reads of `env`.
 */

/** What to export to and how, once a variable asks for traces. */
export interface TraceSettings {
  exporters: readonly ('otlp' | 'console')[];
  protocol: 'http/protobuf' | 'http/json';
  /** The OTLP endpoint the traces go to, for messages (the exporter reads the variables itself). */
  endpoint: string;
  /** Messages, system prompts and tool arguments and results in the spans (opt-in). */
  captureContent: boolean;
  /** `TRACEPARENT` / `TRACESTATE` of the environment: the run's root span continues that trace. */
  incoming?: { traceparent: string; tracestate?: string };
}

/** Values of the content opt-in that put content into spans (the conventions' and the older `true`). */
const CONTENT_ON = new Set(['true', 'span_only', 'span_and_event']);

const DEFAULT_ENDPOINT = 'http://localhost:4318';

/**
 * The run's trace settings, or none: `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`
 * turn tracing off; otherwise it is on when `OTEL_TRACES_EXPORTER` names `otlp` or `console`, or
 * an OTLP endpoint is set. `warnings` name what was asked and cannot be done.
 */
export function traceSettings(env: NodeJS.ProcessEnv): { settings?: TraceSettings; warnings: string[] } {
  const warnings: string[] = [];
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { warnings };
  const tracesEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  const baseEndpoint = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const named = nonEmpty(env.OTEL_TRACES_EXPORTER)
    ?.split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (named?.includes('none')) return { warnings };
  let exporters: ('otlp' | 'console')[];
  if (named === undefined) {
    if (tracesEndpoint === undefined && baseEndpoint === undefined) return { warnings };
    exporters = ['otlp'];
  } else {
    exporters = [];
    for (const name of named) {
      if (name === 'otlp' || name === 'console') exporters.push(name);
      else warnings.push(`OTEL_TRACES_EXPORTER: "${name}" is not supported (otlp, console or none)`);
    }
    if (exporters.length === 0) return { warnings };
  }
  const protocolVar = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
    ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
    : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const protocol = nonEmpty(env[protocolVar])?.toLowerCase() ?? 'http/protobuf';
  if (exporters.includes('otlp') && protocol !== 'http/protobuf' && protocol !== 'http/json') {
    warnings.push(
      `${protocolVar}: "${protocol}" is not supported (http/protobuf or http/json): no spans are sent over OTLP`,
    );
    exporters = exporters.filter((name) => name !== 'otlp');
    if (exporters.length === 0) return { warnings };
  }
  const traceparent = nonEmpty(env.TRACEPARENT);
  const tracestate = nonEmpty(env.TRACESTATE);
  const content = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() ?? '';
  return {
    settings: {
      exporters,
      protocol: protocol === 'http/json' ? 'http/json' : 'http/protobuf',
      endpoint: tracesEndpoint ?? `${(baseEndpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '')}/v1/traces`,
      captureContent: CONTENT_ON.has(content),
      ...(traceparent ? { incoming: { traceparent, ...(tracestate ? { tracestate } : {}) } } : {}),
    },
    warnings,
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
