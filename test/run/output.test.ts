import { describe, expect, it } from 'vitest';
import { BudgetError, CancelledError, RuntimeError } from '../../internal/errors.js';
import { type DryRunView, renderDryRun } from '../../internal/output/dry-run.js';
import { interruptedLine } from '../../internal/output/in-flight.js';
import { buildJsonEnvelope, renderJsonEnvelope } from '../../internal/output/json-envelope.js';
import { detectRefusal } from '../../internal/output/refusal.js';
import { createRunRenderer } from '../../internal/output/run-renderer.js';
import { createVerboseFormatter, preview, verboseSummary } from '../../internal/output/verbose.js';
import type { RunEvent, RunEventBody } from '../../internal/runner/events.js';
import type { AgentRunResult } from '../../internal/runner/types.js';

const usage = (input: number, output: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
});

function result(overrides: Partial<AgentRunResult> = {}): AgentRunResult {
  return {
    agent: 'lead',
    path: 'lead',
    depth: 0,
    status: 'completed',
    content: 'final answer',
    model: 'anthropic/claude-x',
    stopReason: 'end_turn',
    usage: usage(30, 12),
    retries: 0,
    turns: 2,
    durationMs: 1234,
    toolCalls: 0,
    toolCallDetails: [],
    filesRead: [],
    filesModified: [],
    children: [],
    ...overrides,
  };
}

function event(body: RunEventBody, depth = 0, agent = 'lead'): RunEvent {
  return { path: agent, agent, depth, time: 0, ...body } as RunEvent;
}

const baseView: DryRunView = {
  model: 'openai/gpt-4o',
  workdir: '/w',
  timeoutSeconds: 120,
  systemPrompt: '',
  files: [],
  userMessage: 'Execute the task described in your instructions.',
  defaultUserMessage: 'Execute the task described in your instructions.',
  stream: false,
  tools: [],
  mcpServers: [],
  subAgents: [],
  subAgentsConfig: {
    maxDepth: 3,
    parallel: true,
    timeout: 0,
    resultFormat: 'text',
    overrides: false,
    spawn: false,
    maxSpawn: 16,
    delegate: false,
    maxSubtasks: 5,
    background: false,
    askParent: false,
    resume: false,
    maxQuestions: 3,
  },
};

describe('dry-run layout', () => {
  it("Go axe's v1.8 layout: 0 for unset parameters, an empty line for an empty prompt, (default)", () => {
    expect(renderDryRun(baseView)).toBe(
      [
        '=== Dry Run ===',
        '',
        'Model:    openai/gpt-4o',
        'Workdir:  /w',
        'Timeout:  120s',
        'Params:   temperature=0, max_tokens=0',
        'Budget:   0 tokens (0 = unlimited)',
        'Stream:   no',
        '',
        '--- System Prompt ---',
        '',
        '',
        '--- Skill ---',
        '(none)',
        '',
        '--- Files (0) ---',
        '(none)',
        '',
        '--- User Message ---',
        '(default)',
        '',
        '--- Tools ---',
        '(none)',
        '',
        '--- MCP Servers ---',
        '(none)',
        '',
        '--- Sub-Agents ---',
        '(none)',
        '',
      ].join('\n'),
    );
  });

  it('shows sub-agents with max depth, parallel and timeout, MCP servers without secrets', () => {
    const text = renderDryRun({
      ...baseView,
      temperature: 0,
      maxTokens: 512,
      budgetMaxTokens: 9000,
      subAgents: ['basic', 'with_skill'],
      subAgentsConfig: { ...baseView.subAgentsConfig, maxDepth: 2, parallel: false, timeout: 60 },
      mcpServers: [
        {
          name: 'fs',
          transport: 'stdio',
          command: 'npx',
          args: ['srv', '/tmp', '--api-key', 'secret-6'],
          env: { TOKEN: 'secret-1' },
        },
        {
          name: 'web',
          transport: 'sse',
          url: 'http://127.0.0.1:9/sse',
          headers: { Authorization: 'secret-2' },
        },
        {
          name: 'keyed',
          transport: 'streamable-http',
          url: 'https://me:secret-3@example.test/mcp?key=secret-4&key=secret-5&mode=x',
          headers: {},
        },
      ],
    });
    expect(text).toContain(
      'Params:   temperature=0, max_tokens=512\nBudget:   9000 tokens (0 = unlimited)\n',
    );
    expect(text).toContain(
      '--- Sub-Agents ---\nbasic, with_skill\nMax Depth: 2\nParallel:  no\nTimeout:   60s\n',
    );
    expect(text).toContain(
      '--- MCP Servers ---\nfs: npx srv /tmp --api-key *** (stdio)\nweb: http://127.0.0.1:9/sse (sse)\n' +
        'keyed: https://***@example.test/mcp?key=***&mode=*** (streamable-http)\n',
    );
    expect(text).not.toContain('secret');
  });
});

describe('--json envelope', () => {
  it('carries the Go axe fields, cumulative own tokens, budget and the agents tree', () => {
    const child = result({
      agent: 'helper',
      path: 'lead/call_agent#1:helper',
      depth: 1,
      status: 'timeout',
      usage: usage(5, 2),
      error: 'timeout after 1s',
      durationMs: 1000,
    });
    const envelope = buildJsonEnvelope({
      result: result({
        toolCalls: 1,
        toolCallDetails: [
          {
            name: 'call_agent',
            input: { agent: 'helper' },
            output: 'x',
            isError: true,
            turn: 1,
            durationMs: 7,
          },
        ],
        children: [child],
        cost: 0.25,
      }),
      budget: { used: 49, limit: 40 },
      error: new BudgetError(49, 40),
    });
    expect(envelope).toMatchObject({
      content: 'final answer',
      model: 'claude-x',
      provider: 'anthropic',
      input_tokens: 30,
      output_tokens: 12,
      stop_reason: 'end_turn',
      duration_ms: 1234,
      tool_calls: 1,
      tool_call_details: [
        {
          name: 'call_agent',
          input: { agent: 'helper' },
          output: 'x',
          is_error: true,
          turn: 0,
          duration_ms: 7,
        },
      ],
      refused: false,
      retry_attempts: 0,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost: 0.25,
      budget_max_tokens: 40,
      budget_used_tokens: 49,
      budget_exceeded: true,
      error: { kind: 'budget', message: 'budget exceeded: used 49 of 40 tokens', exit_code: 4 },
      exit_code: 4,
      agents: [
        {
          agent: 'helper',
          depth: 1,
          status: 'timeout',
          duration_ms: 1000,
          input_tokens: 5,
          output_tokens: 2,
          error: 'timeout after 1s',
          children: [],
        },
      ],
    });
  });

  it("prints its keys in alphabetical order, as Go axe's map does; a call's input keys too", () => {
    const text = renderJsonEnvelope({
      result: result({
        toolCalls: 1,
        toolCallDetails: [
          {
            name: 'read_file',
            input: { path: 'a', limit: 5, offset: 1 },
            output: 'x',
            isError: false,
            turn: 1,
            durationMs: 3,
          },
        ],
      }),
      budget: { used: 42, limit: 100 },
    });
    expect(text.endsWith('}\n')).toBe(true);
    const envelope = JSON.parse(text) as Record<string, unknown>;
    const keys = Object.keys(envelope);
    expect(keys).toEqual([...keys].sort());
    expect(keys.slice(0, 4)).toEqual([
      'agents',
      'budget_exceeded',
      'budget_max_tokens',
      'budget_used_tokens',
    ]);
    const [detail] = envelope.tool_call_details as Record<string, unknown>[];
    // Go's struct order, then its map's sorted keys.
    expect(Object.keys(detail ?? {})).toEqual(['name', 'input', 'output', 'is_error', 'turn', 'duration_ms']);
    expect(Object.keys(detail?.input as object)).toEqual(['limit', 'offset', 'path']);
  });

  it('omits budget and error fields when there are none', () => {
    const envelope = buildJsonEnvelope({ result: result(), budget: { used: 42 } });
    expect(envelope).not.toHaveProperty('budget_max_tokens');
    expect(envelope).not.toHaveProperty('error');
    expect(envelope).not.toHaveProperty('cost');
  });
});

describe('verbose lines', () => {
  it('renders the spec strings for turns and sub-agents', () => {
    const format = createVerboseFormatter();
    const task = 'x'.repeat(100);
    expect(format(event({ type: 'turn.start', turn: 1, messages: 1, pendingToolCalls: 0 }))).toEqual([
      '[turn 1] Sending request (1 messages, 0 tool calls pending)',
    ]);
    expect(
      format(event({ type: 'turn.end', turn: 1, stopReason: 'tool_use', toolCalls: 2, usage: usage(1, 1) })),
    ).toEqual(['[turn 1] Received response: tool_use (2 tool calls)']);
    expect(format(event({ type: 'agent.start', model: 'm', task }, 1, 'helper'))).toEqual([
      `[sub-agent] Calling "helper" (depth 1) with task: ${'x'.repeat(80)}...`,
    ]);
    const end = {
      type: 'agent.end',
      durationMs: 12,
      usage: usage(1, 1),
      chars: 5,
      content: 'hello',
      turns: 1,
      toolCalls: 0,
    } as const;
    expect(format(event({ ...end, status: 'completed' }, 1, 'helper'))).toEqual([
      '[sub-agent] "helper" completed in 12ms (5 chars returned)',
    ]);
    expect(format(event({ ...end, status: 'error', error: 'boom' }, 1, 'helper'))).toEqual([
      '[sub-agent] "helper" failed: boom',
    ]);
    expect(format(event({ type: 'turn.start', turn: 1, messages: 1, pendingToolCalls: 0 }, 1))).toEqual([]);
  });

  it('summarises a tool call in a [tool] line', () => {
    const format = createVerboseFormatter();
    format(event({ type: 'tool.start', turn: 1, callId: 'c1', name: 'read_file', input: { path: 'a.txt' } }));
    expect(
      format(
        event({
          type: 'tool.end',
          turn: 1,
          callId: 'c1',
          name: 'read_file',
          output: 'one\ntwo',
          isError: false,
          durationMs: 1,
        }),
      ),
    ).toEqual(['[tool] read_file: path "a.txt" (2 lines) (success)']);
  });

  it('closes with duration, cumulative tokens and stop reason', () => {
    expect(verboseSummary({ result: result(), budget: { used: 42 } })).toEqual([
      'Duration: 1234ms',
      'Tokens:   30 input, 12 output (cumulative)',
      'Stop:     end_turn',
    ]);
  });

  it('previews by characters, not bytes', () => {
    expect(preview('é'.repeat(81), 80)).toBe(`${'é'.repeat(80)}...`);
    expect(preview('short', 80)).toBe('short');
  });
});

describe('refusal detection (Go axe patterns)', () => {
  it.each([
    ["I can't help with that.", true],
    ['As an AI, I am unable to comply', true],
    ['Sure. Wi cannot is not a word.', false],
    ['', false],
    ['Here is the review.', false],
  ])('%s → %s', (text, refused) => {
    expect(detectRefusal(text)).toBe(refused);
  });
});

describe('run renderer', () => {
  function sinks() {
    const out: string[] = [];
    const err: string[] = [];
    return {
      out,
      err,
      stdout: { write: (t: string) => out.push(t) },
      stderr: { write: (t: string) => err.push(t) },
    };
  }

  it('streams only depth-0 text and does not print it twice', () => {
    const s = sinks();
    const renderer = createRunRenderer({ json: false, verbose: false, stream: true, ...s });
    renderer.emit(event({ type: 'turn.start', turn: 2, messages: 3, pendingToolCalls: 0 }));
    renderer.emit(event({ type: 'text.delta', text: 'sub' }, 1, 'helper'));
    renderer.emit(event({ type: 'text.delta', text: 'final ' }));
    renderer.emit(event({ type: 'text.delta', text: 'ans' }));
    renderer.finish({ result: result(), budget: { used: 1 } });
    expect(s.out.join('')).toBe('final answer');
  });

  it('sets streamed text of a tool-calling turn apart from the final answer', () => {
    const s = sinks();
    const renderer = createRunRenderer({ json: false, verbose: false, stream: true, ...s });
    renderer.emit(event({ type: 'turn.start', turn: 1, messages: 1, pendingToolCalls: 0 }));
    renderer.emit(event({ type: 'text.delta', text: 'Delegating.' }));
    renderer.emit(
      event({ type: 'turn.end', turn: 1, stopReason: 'tool_use', toolCalls: 1, usage: usage(1, 1) }),
    );
    renderer.emit(event({ type: 'turn.start', turn: 2, messages: 3, pendingToolCalls: 1 }));
    renderer.emit(event({ type: 'text.delta', text: 'final answer' }));
    renderer.finish({ result: result(), budget: { used: 1 } });
    expect(s.out.join('')).toBe('Delegating.\n\nfinal answer');
  });

  it('prints the answer so far on a budget stop, nothing on other failures', () => {
    const budget = sinks();
    createRunRenderer({ json: false, verbose: false, stream: false, ...budget }).finish({
      result: result({ content: 'partial' }),
      budget: { used: 50, limit: 10 },
      error: new BudgetError(50, 10),
    });
    expect(budget.out.join('')).toBe('partial');
    for (const error of [
      new RuntimeError('agent exceeded maximum conversation turns (50)'),
      new CancelledError(),
    ]) {
      const failed = sinks();
      createRunRenderer({ json: false, verbose: false, stream: false, ...failed }).finish({
        result: result({ content: 'partial' }),
        budget: { used: 1 },
        error,
      });
      expect(failed.out).toEqual([]);
    }
  });

  it('tracks the agents in flight and names them on interrupt', () => {
    const s = sinks();
    const renderer = createRunRenderer({ json: false, verbose: false, stream: false, ...s });
    renderer.emit({ ...event({ type: 'agent.start', model: 'm', task: 't' }, 1, 'a'), path: 'lead/a' });
    renderer.emit({ ...event({ type: 'agent.start', model: 'm', task: 't' }, 1, 'b'), path: 'lead/b' });
    renderer.emit({
      ...event(
        {
          type: 'agent.end',
          status: 'completed',
          durationMs: 1,
          usage: usage(0, 0),
          chars: 0,
          content: '',
          turns: 1,
          toolCalls: 0,
        },
        1,
        'a',
      ),
      path: 'lead/a',
    });
    expect(renderer.inFlight()).toEqual(['lead/b']);
    expect(interruptedLine('SIGINT', ['lead', ...renderer.inFlight()])).toBe(
      'axe: interrupted by SIGINT; stopping lead, lead/b\n',
    );
  });
});
