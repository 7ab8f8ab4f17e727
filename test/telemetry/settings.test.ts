import { describe, expect, it } from 'vitest';
import { traceSettings } from '../../internal/telemetry/settings.js';

/** Which OTEL_ variables turn tracing on, and how they are read. */
describe('traceSettings', () => {
  it('is off with nothing set, with OTEL_SDK_DISABLED=true and with OTEL_TRACES_EXPORTER=none', () => {
    expect(traceSettings({})).toEqual({ warnings: [] });
    expect(traceSettings({ TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })).toEqual(
      {
        warnings: [],
      },
    );
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(traceSettings({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' }).settings).toBeUndefined();
    expect(traceSettings({ ...endpoint, OTEL_TRACES_EXPORTER: 'otlp,none' }).settings).toBeUndefined();
  });

  it('an endpoint turns OTLP on: the traces path appended to the base one, the traces one as it is', () => {
    expect(traceSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).settings).toEqual({
      exporters: ['otlp'],
      protocol: 'http/protobuf',
      endpoint: 'http://collector:4318/v1/traces',
      captureContent: false,
    });
    const traces = traceSettings({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:9999/otlp',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    }).settings;
    expect(traces).toMatchObject({ endpoint: 'http://collector:9999/otlp', protocol: 'http/json' });
  });

  it('OTEL_TRACES_EXPORTER: otlp (to localhost by default), console, both; unknown names are said', () => {
    expect(traceSettings({ OTEL_TRACES_EXPORTER: 'otlp' }).settings?.endpoint).toBe(
      'http://localhost:4318/v1/traces',
    );
    expect(traceSettings({ OTEL_TRACES_EXPORTER: ' Console ' }).settings?.exporters).toEqual(['console']);
    expect(traceSettings({ OTEL_TRACES_EXPORTER: 'otlp,console' }).settings?.exporters).toEqual([
      'otlp',
      'console',
    ]);
    expect(traceSettings({ OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual({
      warnings: ['OTEL_TRACES_EXPORTER: "zipkin" is not supported (otlp, console or none)'],
    });
  });

  it('grpc is refused with one warning naming the variable; the console exporter still runs', () => {
    expect(
      traceSettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }),
    ).toEqual({
      warnings: [
        'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "grpc" is not supported (http/protobuf or http/json): no spans are sent over OTLP',
      ],
    });
    const both = traceSettings({ OTEL_TRACES_EXPORTER: 'otlp,console', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(both.settings?.exporters).toEqual(['console']);
    expect(both.warnings).toHaveLength(1);
  });

  it('content only with the opt-in; TRACEPARENT and TRACESTATE are taken for the root span', () => {
    const on = { OTEL_TRACES_EXPORTER: 'console' };
    for (const value of ['true', 'SPAN_ONLY', 'span_and_event']) {
      expect(
        traceSettings({ ...on, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value }).settings
          ?.captureContent,
      ).toBe(true);
    }
    for (const value of ['false', 'NO_CONTENT', 'EVENT_ONLY', '1']) {
      expect(
        traceSettings({ ...on, OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value }).settings
          ?.captureContent,
      ).toBe(false);
    }
    const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(traceSettings({ ...on, TRACEPARENT: parent, TRACESTATE: 'vendor=x' }).settings?.incoming).toEqual({
      traceparent: parent,
      tracestate: 'vendor=x',
    });
  });
});
