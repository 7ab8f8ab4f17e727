import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../telemetry/otlp-receiver.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `axe run` with OpenTelemetry's variables: one trace of GenAI spans per run, sent to a loopback
 * OTLP receiver (http/json and http/protobuf), trace context in from TRACEPARENT and out to
 * run_command, content only with its opt-in, never a secret, and a collector that never answers
 * costs the run a warning, not its exit.
 */
const setup = e2eHomes();
const receivers: OtlpReceiver[] = [];
afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
});

async function receiver(options: { hang?: boolean } = {}): Promise<OtlpReceiver> {
  const started = await startOtlpReceiver(options);
  receivers.push(started);
  return started;
}

interface TreeNode {
  path: string;
  status: string;
  call_id?: string;
  children: TreeNode[];
}

const byName = (spans: ReceivedSpan[], prefix: string) =>
  spans.filter((span) => span.name.startsWith(prefix));

const CONTENT_KEYS = [
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'axe.task',
  'axe.answer',
];

describe.concurrent('tracing', () => {
  it('a fan-out with a failing, a timed-out and a background child is one trace whose tree is `axe runs show`s', async () => {
    const { home, fake } = await setup();
    const otlp = await receiver();
    home.agent('ok', agentToml('ok'));
    home.agent('broken', agentToml('broken'));
    home.agent('sleeper', agentToml('sleeper', { extra: ['[budget]', 'timeout = 1'] }));
    home.agent('bg', agentToml('bg'));
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['ok', 'broken', 'sleeper', 'bg'],
        subAgentsConfig: ['background = true'],
      }),
    );
    const call = (agent: string, extra: Record<string, unknown> = {}) => ({
      name: 'call_agent',
      arguments: { agent, task: `task for ${agent}`, ...extra },
    });
    fake.respond((request: RecordedRequest) => {
      switch (roleOf(request)) {
        case 'ok':
        case 'bg':
          return { text: `${roleOf(request)} done` };
        case 'broken':
          return { fault: { kind: 'status', status: 400, message: 'bad request' } };
        case 'sleeper':
          return { fault: { kind: 'hang' } };
        default:
          if (request.toolResults.length === 0) {
            return {
              toolCalls: [
                call('ok'),
                call('broken'),
                call('sleeper'),
                call('bg', { run_in_background: true }),
              ],
            };
          }
          if (request.toolResults.length === 4) {
            return {
              toolCalls: [
                { name: 'task_output', arguments: { agent_id: 'lead/call_agent#4:bg', block: true } },
              ],
            };
          }
          return { text: 'lead done' };
      }
    });
    const env = home.env(fake.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(result.stderr).not.toMatch(/traces:/);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('lead done');
    expect(otlp.requests.every((request) => request.path === '/v1/traces')).toBe(true);
    expect(otlp.requests[0]?.contentType).toMatch(/application\/json/);

    const show = await runAxe(['runs', 'show', 'last', '--json'], { env });
    const record = JSON.parse(show.stdout) as { id: string; tree: TreeNode };
    const { spans } = otlp;
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(spans[0]?.resource['service.name']).toBe('axe');
    const spanById = new Map(spans.map((span) => [span.spanId, span]));
    const agents = byName(spans, 'invoke_agent ');
    const nodes: TreeNode[] = [];
    const walk = (node: TreeNode) => {
      nodes.push(node);
      node.children.forEach(walk);
    };
    walk(record.tree);
    expect(agents.map((span) => span.attributes['gen_ai.agent.id']).sort()).toEqual(
      nodes.map((node) => node.path).sort(),
    );
    const agentSpan = (agentPath: string) =>
      agents.find((span) => span.attributes['gen_ai.agent.id'] === agentPath) as ReceivedSpan;
    const root = agentSpan(record.tree.path);
    expect(root.parentSpanId).toBe('');
    expect(root.attributes).toMatchObject({ 'axe.run.id': record.id, 'axe.outcome': 'completed' });
    for (const node of nodes) {
      const span = agentSpan(node.path);
      expect(span.attributes['axe.outcome']).toBe(node.status);
      expect(span.attributes['gen_ai.operation.name']).toBe('invoke_agent');
      if (node.status !== 'completed') {
        expect(span.status.code).toBe(2);
        expect(span.attributes['error.type']).toBe(node.status);
      }
      for (const child of node.children) {
        // A child's span hangs under the span of the tool call that started it, under its caller's.
        const tool = spanById.get(agentSpan(child.path).parentSpanId) as ReceivedSpan;
        expect(tool.name).toBe('execute_tool call_agent');
        expect(tool.attributes['gen_ai.tool.call.id']).toBe(child.call_id);
        expect(tool.parentSpanId).toBe(span.spanId);
      }
    }
    expect(nodes.map((node) => `${node.path.split(':').at(-1)}:${node.status}`).sort()).toEqual([
      'bg:completed',
      'broken:error',
      'lead:completed',
      'ok:completed',
      'sleeper:timeout',
    ]);
    // Each model call: a client span under its agent's, named as the conventions name them.
    const chats = byName(spans, 'chat ');
    const okChat = chats.find((span) => span.parentSpanId === agentSpan('lead/call_agent#1:ok').spanId);
    expect(okChat).toMatchObject({
      name: 'chat claude-test',
      kind: 3,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': 'claude-test',
        'gen_ai.response.model': 'claude-test',
        'gen_ai.response.finish_reasons': ['end_turn'],
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
        'server.address': '127.0.0.1',
        'server.port': Number(new URL(fake.url).port),
      },
    });
    const sleeperChat = chats.find(
      (span) => span.parentSpanId === agentSpan('lead/call_agent#3:sleeper').spanId,
    );
    expect(sleeperChat?.status.code).toBe(2);
    expect(sleeperChat?.attributes['error.type']).toBe('timeout');
    // Without the opt-in, no content; without `[telemetry] propagate`, no traceparent to the provider.
    for (const span of spans) for (const key of CONTENT_KEYS) expect(span.attributes).not.toHaveProperty(key);
    expect(fake.requests.filter((request) => request.headers.traceparent !== undefined)).toEqual([]);
  });

  it('[telemetry] propagate = true: each model request carries its chat span as traceparent', async () => {
    const { home, fake } = await setup();
    const otlp = await receiver();
    home.file('config/axe/config.toml', '[telemetry]\npropagate = true\n');
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'solo done' }));
    const env = home.env(fake.url, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(result.code).toBe(0);
    const [chat] = byName(otlp.spans, 'chat ');
    expect(fake.requests[0]?.headers.traceparent).toBe(`00-${chat?.traceId}-${chat?.spanId}-01`);
  });

  it('TRACEPARENT in: the same trace under its parent; out: run_command sees its call span; content and secrets', async () => {
    const { home, fake } = await setup();
    const otlp = await receiver();
    const workdir = path.dirname(home.file('work/readme.txt', 'hi'));
    home.agent('shell', agentToml('shell', { extra: [`workdir = "${workdir}"`, 'tools = ["run_command"]'] }));
    fake.respond((request: RecordedRequest) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'run_command', arguments: { command: 'echo "tp=$TRACEPARENT"' } }] }
        : { text: 'shell done' },
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const parentId = 'b7ad6b7169203331';
    const apiKey = 'sk-ant-api-key-for-tracing-0123456789';
    const otlpToken = 'otlp-bearer-token-9876543210';
    const env = home.env(fake.url, {
      ANTHROPIC_API_KEY: apiKey,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${otlpToken}`,
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
      OTEL_SERVICE_NAME: 'ci-agents',
      TRACEPARENT: `00-${traceId}-${parentId}-01`,
    });
    const result = await runAxe(
      [
        'run',
        'shell',
        '--agents-dir',
        home.agentsDir,
        '-p',
        `use the key ${apiKey} and the token ${otlpToken}`,
      ],
      { env },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    // The default protocol: http/protobuf, with the configured header.
    expect(otlp.requests[0]?.contentType).toBe('application/x-protobuf');
    expect(otlp.requests[0]?.headers.authorization).toBe(`Bearer ${otlpToken}`);
    const { spans } = otlp;
    expect(spans.every((span) => span.traceId === traceId)).toBe(true);
    expect(spans[0]?.resource['service.name']).toBe('ci-agents');
    const [root] = byName(spans, 'invoke_agent ');
    expect(root?.parentSpanId).toBe(parentId);
    const [tool] = byName(spans, 'execute_tool run_command');
    expect(tool?.parentSpanId).toBe(root?.spanId);
    const commandOutput = fake.requests[1]?.toolResults[0]?.content;
    expect(commandOutput).toBe(`tp=00-${traceId}-${tool?.spanId}-01\n`);
    // With the opt-in: messages, system prompt, tool arguments and results.
    const [firstChat] = byName(spans, 'chat ');
    expect(JSON.parse(String(firstChat?.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'use the key *** and the token ***' }] },
    ]);
    expect(firstChat?.attributes['gen_ai.system_instructions']).toBe(
      '[{"type":"text","content":"ROLE:shell"}]',
    );
    expect(JSON.parse(String(firstChat?.attributes['gen_ai.output.messages']))[0]).toMatchObject({
      role: 'assistant',
      finish_reason: 'tool_use',
    });
    expect(tool?.attributes['gen_ai.tool.call.arguments']).toBe('{"command":"echo \\"tp=$TRACEPARENT\\""}');
    expect(tool?.attributes['gen_ai.tool.call.result']).toBe(commandOutput);
    // No secret in any attribute: the provider's key, the collector's token.
    const everything = JSON.stringify(spans);
    expect(everything).toContain('***');
    expect(everything).not.toContain(apiKey);
    expect(everything).not.toContain(otlpToken);
  });

  it('without OTEL_ variables nothing is traced: run_command gets no TRACEPARENT, as in Go axe', async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/readme.txt', 'hi'));
    home.agent('shell', agentToml('shell', { extra: [`workdir = "${workdir}"`, 'tools = ["run_command"]'] }));
    fake.respond((request: RecordedRequest) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'run_command', arguments: { command: 'echo "tp=$TRACEPARENT"' } }] }
        : { text: 'shell done' },
    );
    const env = home.env(fake.url, {
      TRACEPARENT: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    const result = await runAxe(['run', 'shell', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(result.code).toBe(0);
    expect(fake.requests[1]?.toolResults[0]?.content).toBe('tp=\n');
  });

  it('a collector that never answers: the answer, exit 0, one warning, and the process ends', async () => {
    const { home, fake } = await setup();
    const otlp = await receiver({ hang: true });
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'solo done' }));
    const env = home.env(fake.url, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('solo done');
    expect(otlp.requests.length).toBeGreaterThan(0);
    expect(result.stderr).toBe(
      `Warning: traces: the spans could not be sent to ${otlp.url}/v1/traces within 2 s: they are dropped\n`,
    );
  });

  it('OTEL_TRACES_EXPORTER=console: the spans as JSON lines on stderr, stdout only the answer', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'solo done' }));
    const env = home.env(fake.url, { OTEL_TRACES_EXPORTER: 'console' });
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('solo done');
    const spans = result.stderr
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { name: string; parentSpanId?: string; spanId: string });
    expect(spans.map((span) => span.name).sort()).toEqual(['chat claude-test', 'invoke_agent solo']);
    const root = spans.find((span) => span.name === 'invoke_agent solo');
    expect(spans.find((span) => span.name === 'chat claude-test')?.parentSpanId).toBe(root?.spanId);
  });
});
