import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../internal/runner/events.js';
import { startTelemetry } from '../../internal/telemetry/export.js';
import type { TraceSettings } from '../../internal/telemetry/settings.js';

/** The SDK set up from the settings, through the console exporter (lines handed to `write`). */
const CONSOLE: TraceSettings = {
  exporters: ['console'],
  protocol: 'http/protobuf',
  endpoint: 'http://localhost:4318/v1/traces',
  captureContent: false,
};
const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';

function oneAgent(path: string): RunEvent[] {
  const at = { path, agent: path, depth: 0, time: Date.now() };
  const usage = { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 };
  return [
    { ...at, type: 'agent.start', model: 'anthropic/claude-test', task: 'go' },
    {
      ...at,
      type: 'agent.end',
      status: 'completed',
      durationMs: 1,
      usage,
      chars: 2,
      content: 'ok',
      turns: 1,
      toolCalls: 0,
    },
  ];
}

async function traced(incoming?: string) {
  const lines: string[] = [];
  const telemetry = await startTelemetry(
    { ...CONSOLE, ...(incoming ? { incoming: { traceparent: incoming } } : {}) },
    { env: {}, write: (line) => lines.push(line), secrets: { add: () => {}, mask: (text) => text } },
  );
  const spans = () =>
    lines.map((line) => JSON.parse(line) as { traceId: string; parentSpanId?: string; name: string });
  return { telemetry, spans };
}

describe('startTelemetry', () => {
  it('batch: the batch span under TRACEPARENT, a span per item, each item run under its item with its run id', async () => {
    const { telemetry, spans } = await traced(`00-${TRACE_ID}-${PARENT}-01`);
    const batch = telemetry.batch({ id: 'b-1', agent: 'labeler', items: 2 });
    const item = batch.item({ key: 'a', line: 1 }, Date.now(), () => 'run-a');
    for (const event of oneAgent('labeler')) item.observe(event);
    item.end({ status: 'completed', runId: 'run-a', error: null }, Date.now());
    batch.unran({ key: 'b', line: 2, status: 'error', error: 'line 2: not JSON' }, Date.now());
    batch.end({ total: 2, completed: 1, failed: 1, skipped: 0 }, Date.now());
    expect(await telemetry.close()).toBeUndefined();
    type Line = {
      traceId: string;
      spanId: string;
      parentSpanId?: string;
      name: string;
      attributes: Record<string, unknown>;
      status: { code: number; message?: string };
    };
    const all = spans() as Line[];
    const one = (name: string, key?: string) =>
      all.find(
        (span) => span.name === name && (key === undefined || span.attributes['axe.batch.item.key'] === key),
      );
    const root = one('axe.batch labeler');
    expect(root).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: PARENT,
      attributes: {
        'axe.batch.id': 'b-1',
        'axe.batch.items': 2,
        'axe.batch.failed': 1,
        'axe.batch.status.completed': 1,
        'axe.batch.status.error': 1,
      },
      status: { code: 2 },
    });
    expect(one('axe.batch.item', 'a')).toMatchObject({
      parentSpanId: root?.spanId,
      attributes: { 'axe.batch.item.status': 'completed', 'axe.run.id': 'run-a' },
      status: { code: 0 },
    });
    expect(one('axe.batch.item', 'b')).toMatchObject({
      parentSpanId: root?.spanId,
      attributes: { 'axe.batch.item.line': 2, 'axe.batch.item.status': 'error', 'error.type': 'error' },
      status: { code: 2, message: 'line 2: not JSON' },
    });
    expect(one('invoke_agent labeler')).toMatchObject({
      parentSpanId: one('axe.batch.item', 'a')?.spanId,
      attributes: { 'axe.run.id': 'run-a' },
    });
  });

  it('an incoming TRACEPARENT that is not one: a warning, and a trace of its own', async () => {
    const { telemetry, spans } = await traced('00-zzz-1');
    expect(telemetry.warnings).toEqual([
      'TRACEPARENT: "00-zzz-1" is not a W3C traceparent: the run starts a trace of its own',
    ]);
    for (const event of oneAgent('solo')) telemetry.spans.observe(event);
    await telemetry.close();
    const [root] = spans();
    expect(root?.parentSpanId).toBeUndefined();
    expect(root?.traceId).toMatch(/^[0-9a-f]{32}$/);
  });
});
