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
  it('spansUnder: another run (a batch item) sent with the run, its root under the given span', async () => {
    const { telemetry, spans } = await traced();
    const item = telemetry.spansUnder(`00-${TRACE_ID}-${PARENT}-01`);
    for (const event of oneAgent('item')) item?.observe(event);
    expect(telemetry.spansUnder('00-not-a-traceparent')).toBeUndefined();
    expect(await telemetry.close()).toBeUndefined();
    expect(spans()).toMatchObject([{ name: 'invoke_agent item', traceId: TRACE_ID, parentSpanId: PARENT }]);
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
