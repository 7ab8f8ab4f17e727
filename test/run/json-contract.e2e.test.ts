import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import outputSchema from '../../schemas/run-output.schema.json' with { type: 'json' };
import showSchema from '../../schemas/runs-show-output.schema.json' with { type: 'json' };
import type { ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** `axe run --json`: one object on every outcome, as schemas/run-output.schema.json describes. */
const setup = e2eHomes();
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validate = ajv.compile(outputSchema);
const validateShow = ajv.compile(showSchema);
const validateEvent = ajv.compile(eventSchema);
const SNAKE_CASE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** Every key of a JSON value, nested ones included, except inside a tool call's input. */
function keysOf(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(keysOf);
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, inner]) => [key, ...(key === 'input' ? [] : keysOf(inner))]);
}

/** stdout is exactly one line, one object, that matches the schema. */
function envelopeOf(stdout: string): Record<string, unknown> & { error?: Record<string, unknown> } {
  expect(stdout.endsWith('\n')).toBe(true);
  expect(stdout.trimEnd().split('\n')).toHaveLength(1);
  const envelope = JSON.parse(stdout);
  expect(validate(envelope), JSON.stringify(validate.errors)).toBe(true);
  return envelope;
}

describe('axe run --json', () => {
  it('a run with sub-agents: Go keys for the top agent, totals for the tree, run_id of its record', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper'));
    fake.respond((request): ScriptedReply => {
      if (roleOf(request) === 'helper') return { text: 'helped', usage: { input: 7, output: 3 } };
      return delegatingParent([callAgent('helper', 'go')], 'all done')(request);
    });
    const env = home.env(fake.url);
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env,
    });
    expect(result.code).toBe(0);
    const envelope = envelopeOf(result.stdout);
    expect(envelope).toMatchObject({ content: 'all done', input_tokens: 300, output_tokens: 30 });
    expect(envelope.totals).toEqual({
      input_tokens: 307,
      output_tokens: 33,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      tokens: 340,
    });
    expect(envelope).not.toHaveProperty('error');
    expect(home.runIds()).toEqual([envelope.run_id]);
    const shown = await runAxe(['runs', 'show', String(envelope.run_id), '--json'], { env });
    const record = JSON.parse(shown.stdout);
    expect(validateShow(record), JSON.stringify(validateShow.errors)).toBe(true);
    expect(record).toMatchObject({ id: envelope.run_id, status: 'completed', exit_code: 0 });
    expect(record.request).toMatchObject({ agent: 'lead', agents_dirs: [home.agentsDir] });
    expect(record.tree.children[0]).toMatchObject({ agent: 'helper', usage: { input_tokens: 7 } });
    const list = await runAxe(['runs', 'list', '--json'], { env });
    expect(keysOf(JSON.parse(list.stdout)).filter((key) => !SNAKE_CASE.test(key))).toEqual([]);
  });

  it('--events: snake_case lines that match schemas/run-event.schema.json, tool inputs as the model sent them', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper'));
    fake.respond((request): ScriptedReply => {
      if (roleOf(request) === 'helper') return { text: 'helped' };
      return delegatingParent([callAgent('helper', 'go')], 'all done')(request);
    });
    const events = path.join(home.root, 'events.jsonl');
    const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--events', events];
    const result = await runAxe(args, { env: home.env(fake.url) });
    expect(result.code).toBe(0);
    const lines = readFileSync(events, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    for (const line of lines) expect(validateEvent(line), JSON.stringify(validateEvent.errors)).toBe(true);
    expect(lines.flatMap(keysOf).filter((key) => !SNAKE_CASE.test(key))).toEqual([]);
    const end = lines.find((line) => line.type === 'turn.end' && line.depth === 0);
    expect(end).toMatchObject({
      stop_reason: expect.any(String),
      tool_calls: 1,
      usage: { input_tokens: 100 },
    });
    expect(lines.find((line) => line.type === 'tool.start')).toMatchObject({
      call_id: expect.any(String),
      input: { agent: 'helper', task: 'go' },
    });
  });

  it('a provider error: the error object, the partial usage, exit 3', async () => {
    const { home, fake } = await setup();
    home.agent(
      'lead',
      agentToml('lead', { extra: ['sub_agents = ["helper"]', '[retry]', 'max_retries = 0'] }),
    );
    home.agent('helper', agentToml('helper'));
    fake.respond((request): ScriptedReply => {
      if (roleOf(request) === 'helper') return { text: 'helped', usage: { input: 7, output: 3 } };
      if (request.toolResults.length === 0)
        return { toolCalls: [callAgent('helper', 'go')], usage: { input: 100, output: 10 } };
      return { fault: { kind: 'status', status: 503, message: 'busy' } };
    });
    const env = home.env(fake.url);
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env,
    });
    expect(result.code).toBe(3);
    const envelope = envelopeOf(result.stdout);
    expect(envelope.error).toMatchObject({ kind: 'provider', exit_code: 3 });
    expect(String(envelope.error?.message)).toContain('503');
    expect(envelope.exit_code).toBe(3);
    // What was used before the error: the lead's first turn and the helper.
    expect(envelope).toMatchObject({ input_tokens: 100, output_tokens: 10, provider: 'anthropic' });
    expect(envelope.totals).toMatchObject({ input_tokens: 107, output_tokens: 13 });
    expect(envelope.run_id).toBe(home.runIds()[0]);
    // stderr still says it, once.
    expect(result.stderr).toMatch(/^axe: .*503/m);
  });

  it('a timeout: kind timeout, exit 3', async () => {
    const { home, fake } = await setup();
    home.agent('slow', agentToml('slow'));
    fake.respond((): ScriptedReply => ({ fault: { kind: 'hang' } }));
    const args = ['run', 'slow', '--agents-dir', home.agentsDir, '-p', 'x', '--json', '--timeout', '1'];
    const result = await runAxe(args, { env: home.env(fake.url) });
    expect(result.code).toBe(3);
    const envelope = envelopeOf(result.stdout);
    expect(envelope.error).toEqual({ kind: 'timeout', message: 'timeout after 1s', exit_code: 3 });
  });

  it('a config error before the run: a bad agent file, an unknown agent, a bad flag (exit 2)', async () => {
    const { home } = await setup();
    home.agent('broken', 'name = "broken"\nmodel = 42\n');
    const env = home.env();
    const cases = [
      ['run', 'broken', '--agents-dir', home.agentsDir, '-p', 'x', '--json'],
      ['run', 'nobody', '--agents-dir', home.agentsDir, '-p', 'x', '--json'],
      ['run', 'broken', '--agents-dir', home.agentsDir, '-p', 'x', '--json', '--max-tokens', 'lots'],
    ];
    for (const args of cases) {
      const result = await runAxe(args, { env });
      expect(result.code).toBe(2);
      const envelope = envelopeOf(result.stdout);
      expect(envelope.error).toMatchObject({ kind: 'config', exit_code: 2 });
      expect(result.stderr).toBe(`axe: ${envelope.error?.message}\n`);
      expect(envelope).toMatchObject({ content: '', input_tokens: 0, totals: { tokens: 0 } });
    }
  });

  it('a usage error cac or the CLI finds before the run: the same object, exit 2, stderr its one line', async () => {
    const { home } = await setup();
    home.agent('lead', agentToml('lead'));
    const env = home.env();
    const run = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x'];
    const cases: [string[], string][] = [
      [[...run, '--json', '--bogus'], 'unknown option --bogus'],
      [[...run, '--output-format', 'json', '-x'], 'unknown option -x'],
      [[...run, '--json', '--model'], 'option `-m, --model <provider/model>` value is missing'],
      [
        [...run, '--json=true', '--output-format', 'xml'],
        '--output-format: expected text, json or stream-json, got "xml"',
      ],
    ];
    for (const [args, message] of cases) {
      const result = await runAxe(args, { env });
      expect(result.code, args.join(' ')).toBe(2);
      const envelope = envelopeOf(result.stdout);
      expect(envelope.error).toEqual({ kind: 'config', message, exit_code: 2 });
      expect(envelope).toMatchObject({ content: '', exit_code: 2, totals: { tokens: 0 } });
      expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(result.stderr).toContain(`axe: ${message}`);
    }
    // Without --json stdout stays empty, as in Go axe.
    const plain = await runAxe([...run, '--bogus'], { env });
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
  });

  it('a missing key: kind missing_key; without --json stdout stays empty (Go axe)', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env(undefined, { ANTHROPIC_API_KEY: '' });
    const json = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], { env });
    expect(json.code).toBe(2);
    expect(envelopeOf(json.stdout).error).toMatchObject({ kind: 'missing_key', exit_code: 2 });
    const plain = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(plain.code).toBe(2);
    expect(plain.stdout).toBe('');
  });
});
