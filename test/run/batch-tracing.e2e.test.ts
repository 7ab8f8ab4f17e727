import { afterAll, describe, expect, it } from 'vitest';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../telemetry/otlp-receiver.js';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/**
 * A batch (`axe run <agent> --map FILE`, `axe batches resume`) with OpenTelemetry's variables set
 * is one trace: the batch's span (under TRACEPARENT), a span per item, each item's run under it.
 */
const setup = e2eHomes();
const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

interface Line {
  key: string;
  status: string;
  run_id: string | null;
}

const named = (spans: ReceivedSpan[], prefix: string) => spans.filter((span) => span.name.startsWith(prefix));

describe.concurrent('batch tracing', () => {
  it('a 3-item batch with a failing item is one trace: the batch span, three item spans, each run under its item', async () => {
    const { home, fake } = await setup();
    const otlp = await startOtlpReceiver();
    receivers.push(otlp);
    home.agent('labeler', agentToml('labeler'));
    let failing = true;
    fake.respond((request) =>
      request.lastUserText === 'two' && failing
        ? { fault: { kind: 'status', status: 400, message: 'bad item' } }
        : { text: `A:${request.lastUserText}` },
    );
    home.file(
      'items.jsonl',
      '{"id":"a","message":"one"}\n{"id":"b","message":"two"}\n{"id":"c","message":"three"}\n',
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const env = home.env(fake.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      TRACEPARENT: `00-${traceId}-${parentId}-01`,
    });
    const run = (args: string[]) => runAxe(args, { env, cwd: home.root });
    const result = await run([
      'run',
      'labeler',
      '--agents-dir',
      home.agentsDir,
      '--map',
      'items.jsonl',
      '--key',
      'id',
    ]);
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toMatch(/Warning/);
    const batchId = /^axe: batch (\S+): 3 items\n/.exec(result.stderr)?.[1];
    const out = lines(result.stdout).map((line) => JSON.parse(line) as Line);
    expect(out.map((line) => [line.key, line.status])).toEqual([
      ['a', 'completed'],
      ['b', 'error'],
      ['c', 'completed'],
    ]);

    const spans = [...otlp.spans];
    expect(new Set(spans.map((span) => span.traceId))).toEqual(new Set([traceId]));
    const batches = named(spans, 'axe.batch ');
    expect(batches).toHaveLength(1);
    const [batch] = batches as [ReceivedSpan];
    expect(batch.name).toBe('axe.batch labeler');
    expect(batch.parentSpanId).toBe(parentId);
    expect(batch.attributes).toMatchObject({
      'axe.batch.id': batchId,
      'axe.batch.items': 3,
      'axe.batch.completed': 2,
      'axe.batch.failed': 1,
      'axe.batch.skipped': 0,
      'axe.batch.status.completed': 2,
      'axe.batch.status.error': 1,
    });
    expect(batch.status.code).toBe(2);

    const items = named(spans, 'axe.batch.item');
    expect(items).toHaveLength(3);
    for (const line of out) {
      const item = items.find((span) => span.attributes['axe.batch.item.key'] === line.key) as ReceivedSpan;
      expect(item.parentSpanId).toBe(batch.spanId);
      expect(item.attributes).toMatchObject({
        'axe.batch.item.status': line.status,
        'axe.run.id': line.run_id,
      });
      expect(item.status.code).toBe(line.status === 'completed' ? 0 : 2);
      // The item's run: its agent's span under the item's, with the item's run id; its model call below.
      const agents = named(spans, 'invoke_agent ').filter((span) => span.parentSpanId === item.spanId);
      expect(agents).toHaveLength(1);
      expect(agents[0]?.attributes).toMatchObject({
        'axe.run.id': line.run_id,
        'axe.outcome': line.status,
      });
      expect(named(spans, 'chat ').filter((span) => span.parentSpanId === agents[0]?.spanId)).toHaveLength(1);
    }
    expect(named(spans, 'invoke_agent ')).toHaveLength(3);

    // `axe batches resume --retry-failed`: the item run again is one more trace of the batch.
    failing = false;
    const before = otlp.spans.length;
    const resumed = await run(['batches', 'resume', 'last', '--retry-failed']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const again = otlp.spans.slice(before);
    const [resumedBatch] = named(again, 'axe.batch ');
    expect(resumedBatch?.attributes).toMatchObject({ 'axe.batch.id': batchId, 'axe.batch.completed': 3 });
    const rerun = named(again, 'axe.batch.item');
    expect(
      rerun.map((span) => [span.attributes['axe.batch.item.key'], span.attributes['axe.batch.item.status']]),
    ).toEqual([['b', 'completed']]);
    expect(rerun[0]?.parentSpanId).toBe(resumedBatch?.spanId);
    expect(named(again, 'invoke_agent ')[0]?.parentSpanId).toBe(rerun[0]?.spanId);
  });

  it('a collector that never answers: every result line, exit 0, one warning, and the process ends', async () => {
    const { home, fake } = await setup();
    const otlp = await startOtlpReceiver({ hang: true });
    receivers.push(otlp);
    home.agent('labeler', agentToml('labeler'));
    fake.respond((request) => ({ text: `A:${request.lastUserText}` }));
    home.file('items.txt', 'one\ntwo\n');
    const env = home.env(fake.url, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    const result = await runAxe(['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'items.txt'], {
      env,
      cwd: home.root,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stdout).map((line) => (JSON.parse(line) as Line).status)).toEqual([
      'completed',
      'completed',
    ]);
    expect(otlp.requests.length).toBeGreaterThan(0);
    expect(result.stderr).toMatch(
      new RegExp(
        `: 2 completed, 0 failed\\nWarning: traces: the spans could not be sent to ${otlp.url}/v1/traces within 2 s: they are dropped\\n$`,
      ),
    );
  });
});
