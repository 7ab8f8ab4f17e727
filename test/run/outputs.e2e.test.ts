import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * `[output]`: the agent ends through submit_result (checked against the schema) or submit_error;
 * a plain answer gets one reminder; stdout of a top-level agent is the value as one line of JSON.
 */
const setup = e2eHomes();

const REVIEW_OUTPUT = [
  '',
  '[output]',
  'name = "review"',
  'description = "The verdict"',
  '[output.schema]',
  'type = "object"',
  'required = ["verdict"]',
  'additionalProperties = false',
  'properties = { verdict = { type = "string", enum = ["approve", "reject"] }, notes = { type = "array", items = { type = "string" } } }',
];

const submit = (value: unknown, name = 'review') => ({ name: 'submit_result', arguments: { [name]: value } });

/** The tools of an Anthropic request as sent. */
function toolsOf(request: RecordedRequest | undefined): { name: string; input_schema: unknown }[] {
  return (request?.body as { tools?: { name: string; input_schema: unknown }[] } | undefined)?.tools ?? [];
}

async function seed(script: (request: RecordedRequest) => ScriptedReply, output = REVIEW_OUTPUT) {
  const { home, fake } = await setup();
  home.agent('reviewer', agentToml('reviewer', { extra: output }));
  fake.respond(script);
  const run = (args: string[] = [], name = 'reviewer') =>
    runAxe(['run', name, '--agents-dir', home.agentsDir, '-p', 'review this', ...args], {
      env: home.env(fake.url),
    });
  return { home, fake, run };
}

describe.concurrent('schema-checked outputs', () => {
  it('an invalid submit_result is refused with each violation; the valid one ends the agent; stdout is the JSON', async () => {
    const { fake, run } = await seed((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [submit({ verdict: 'maybe', notes: ['ok', 3], extra: true })] }
        : { toolCalls: [submit({ verdict: 'approve', notes: ['tidy'] })] },
    );
    const result = await run();
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe('{"verdict":"approve","notes":["tidy"]}\n');
    // No model call after the valid submission.
    expect(fake.requests).toHaveLength(2);
    const [refused] = fake.requests[1]?.toolResults ?? [];
    expect(refused?.isError).toBe(true);
    expect(refused?.content).toBe(
      [
        'The result does not match the schema; correct it and call submit_result again:',
        '- /review/extra: expected no such property, got true',
        '- /review/verdict: expected one of "approve", "reject", got "maybe"',
        '- /review/notes/1: expected string, got 3',
      ].join('\n'),
    );
    const tools = toolsOf(fake.requests[0]);
    expect(tools.map((t) => t.name)).toEqual(['submit_result', 'submit_error']);
    expect(tools[0]?.input_schema).toMatchObject({
      type: 'object',
      required: ['review'],
      properties: { review: { type: 'object', description: 'The verdict', required: ['verdict'] } },
    });
  });

  it("--json carries the value as output, and the child's value reaches a json-format parent", async () => {
    const { home, fake, run } = await seed((request) => {
      if (roleOf(request) === 'lead')
        return request.toolResults.length === 0
          ? { toolCalls: [callAgent('reviewer', 'check')] }
          : { text: 'lead done' };
      return { toolCalls: [submit({ verdict: 'reject' })] };
    });
    home.agent(
      'lead',
      agentToml('lead', { subAgents: ['reviewer'], subAgentsConfig: ['result_format = "json"'] }),
    );
    const top = await run(['--json']);
    expect(JSON.parse(top.stdout)).toMatchObject({
      output: { verdict: 'reject' },
      content: '{"verdict":"reject"}',
    });
    const lead = await run(['--json'], 'lead');
    expect(lead.code).toBe(0);
    const envelope = JSON.parse(lead.stdout) as { agents: { status: string; output: unknown }[] };
    expect(envelope.agents[0]).toMatchObject({ status: 'completed', output: { verdict: 'reject' } });
    const leadResults = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1)?.toolResults ?? [];
    expect(JSON.parse(leadResults[0]?.content ?? '')).toMatchObject({
      status: 'completed',
      result: { verdict: 'reject' },
    });
  });

  it('a plain answer gets one reminder turn, then the agent submits', async () => {
    const { fake, run } = await seed((request) =>
      request.lastUserText.includes('You have not submitted')
        ? request.system.includes('stubborn')
          ? { text: 'still plain' }
          : { toolCalls: [submit({ verdict: 'approve' })] }
        : { text: 'looks fine to me' },
    );
    const ok = await run();
    expect(ok).toMatchObject({ code: 0, stdout: '{"verdict":"approve"}\n' });
    const reminder = fake.requests[1]?.body as { messages: { role: string; content: unknown }[] };
    expect(reminder.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(reminder.messages[2]?.content)).toContain('Call submit_result now');
  });

  it('twice plain ends in error (exit 1); submit_error exits 1 with the agent message', async () => {
    const { home, run } = await seed((request) => {
      if (roleOf(request) === 'quitter')
        return { toolCalls: [{ name: 'submit_error', arguments: { error: 'no diff given' } }] };
      return { text: 'plain again' };
    });
    home.agent('quitter', agentToml('quitter', { extra: ['', '[output]'] }));
    const plain = await run();
    expect(plain).toMatchObject({ code: 1, stdout: '' });
    expect(plain.stderr).toContain('agent ended without calling submit_result');
    const quit = await run([], 'quitter');
    expect(quit).toMatchObject({ code: 1, stdout: '' });
    expect(quit.stderr.trim()).toBe('axe: no diff given');
  });

  it('without a schema the value is a string, sent as { result: string }', async () => {
    const { fake, run } = await seed(() => ({ toolCalls: [submit('all good', 'result')] }), ['', '[output]']);
    const result = await run();
    expect(result).toMatchObject({ code: 0, stdout: '"all good"\n' });
    const tools = toolsOf(fake.requests[0]);
    expect(tools[0]?.input_schema).toEqual({
      type: 'object',
      properties: { result: { type: 'string', description: 'Your final result' } },
      required: ['result'],
    });
  });

  it('a schema that is not JSON Schema is refused at load, naming its place (exit 2)', async () => {
    const { home, fake, run } = await seed(
      () => ({ text: 'unused' }),
      ['', '[output.schema]', 'type = "object"', 'properties = { verdict = { type = "text" } }'],
    );
    const result = await run();
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/output\.schema\.properties\.verdict\.type/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);
    const validate = await runAxe(['validate', 'reviewer', '--agents-dir', home.agentsDir], {
      env: home.env(fake.url),
    });
    expect(validate.code).not.toBe(0);
  });

  it('--dry-run shows the output; a provider that does not pass keywords on says so', async () => {
    const { home, fake, run } = await seed(() => ({ text: 'unused' }));
    const dry = await run(['--dry-run']);
    expect(dry.stdout).toContain(
      '--- Output ---\nsubmit_result(review): The verdict\nschema: {"type":"object"',
    );
    const show = await runAxe(['agents', 'show', 'reviewer', '--agents-dir', home.agentsDir], {
      env: home.env(fake.url),
    });
    expect(show.stdout).toContain('Output:         submit_result(review) with a schema\n');
    home.agent(
      'local',
      agentToml('local', {
        model: 'ollama/llama3',
        extra: ['', '[output.schema]', 'type = "integer"', 'minimum = 1'],
      }),
    );
    const validate = await runAxe(['validate', 'local', '--agents-dir', home.agentsDir], {
      env: home.env(fake.url),
    });
    expect(validate.stdout + validate.stderr).toContain(
      'the ollama API does not pass minimum of a tool parameter on to the model',
    );
  });
});
