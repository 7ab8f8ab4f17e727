import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import protobuf from 'protobufjs';

/**
 * A loopback OTLP/HTTP trace receiver for the tests: it takes `http/json` and `http/protobuf`
 * export requests on `/v1/traces`, decodes them into plain spans, and answers as a collector does
 * (or, with `hang`, never answers).
 */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's numbering: 1 internal, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  status: { code: number; message?: string };
  events: { name: string; attributes: Record<string, unknown> }[];
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  requests: { path: string; contentType: string; headers: IncomingHttpHeaders }[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: OtlpReceiver['requests'] = [];
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const contentType = req.headers['content-type'] ?? '';
      requests.push({ path: req.url ?? '', contentType, headers: req.headers });
      if (options.hang) return;
      const body = Buffer.concat(chunks);
      const decoded = contentType.includes('json')
        ? (JSON.parse(body.toString('utf8')) as ExportRequest)
        : decodeProtobuf(body);
      spans.push(...spansOf(decoded));
      res.writeHead(200, { 'content-type': contentType.includes('json') ? 'application/json' : contentType });
      res.end(contentType.includes('json') ? '{}' : '');
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

interface KeyValue {
  key: string;
  value: AnyValue;
}
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string | { toNumber(): number };
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: {
        traceId: string | Uint8Array;
        spanId: string | Uint8Array;
        parentSpanId?: string | Uint8Array;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        events?: { name: string; attributes?: KeyValue[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

function spansOf(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        traceId: hex(span.traceId),
        spanId: hex(span.spanId),
        parentSpanId: span.parentSpanId === undefined ? '' : hex(span.parentSpanId),
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        status: {
          code: span.status?.code ?? 0,
          ...(span.status?.message ? { message: span.status.message } : {}),
        },
        events: (span.events ?? []).map((event) => ({
          name: event.name,
          attributes: attributesOf(event.attributes),
        })),
        resource,
      })),
    );
  });
}

function hex(id: string | Uint8Array): string {
  return typeof id === 'string' ? id : Buffer.from(id).toString('hex');
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plainValue(value)]));
}

function plainValue(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) {
    const int = value.intValue;
    return typeof int === 'object' ? int.toNumber() : Number(int);
  }
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(plainValue);
  return undefined;
}

/** The part of OTLP's trace protobuf the tests read (field numbers as opentelemetry-proto has them). */
const PROTO = `
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Status { string message = 2; int32 code = 3; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5;
  int32 kind = 6; repeated KeyValue attributes = 9; repeated Event events = 11; Status status = 15;
}
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`;

const requestType = protobuf.parse(PROTO, { keepCase: false }).root.lookupType('ExportTraceServiceRequest');

function decodeProtobuf(body: Buffer): ExportRequest {
  const message = requestType.decode(body);
  const request = requestType.toObject(message, { defaults: false, longs: Number }) as ExportRequest;
  // An empty parent id is a root: protobuf's absent bytes.
  for (const resource of request.resourceSpans ?? []) {
    for (const scope of resource.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        if (span.parentSpanId !== undefined && span.parentSpanId.length === 0) delete span.parentSpanId;
      }
    }
  }
  return request;
}
