import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * What `call_agent` has beyond Go's for callers that are not Go-only files: a `description` shown
 * in the events and the live tree, the available agents in an unknown agent's error, typed
 * `inputs`; grace-turn events; a child without a workdir in its caller's.
 */
const setup = e2eHomes();

/** A Markdown lead (not a Go-only file) that may call `helper`. */
const LEAD_MD = `---
name: lead
model: anthropic/claude-test
tools: []
sub_agents: [helper]
---
ROLE:lead
`;

const HELPER = agentToml('helper', {
  extra: ['', '[input.count]', 'type = "integer"', '[input.tags]', 'type = "string[]"'],
});

type Event = Record<string, unknown> & { type: string; path: string };

function events(stderr: string): Event[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Event);
}

/** The parameters of `call_agent` in an Anthropic request. */
function callAgentParameters(request: RecordedRequest | undefined): Record<string, unknown> {
  const tools = (request?.body as { tools?: { name: string; input_schema: { properties: object } }[] })
    ?.tools;
  return (tools?.find((tool) => tool.name === 'call_agent')?.input_schema.properties ?? {}) as Record<
    string,
    unknown
  >;
}

describe.concurrent('call_agent beyond Go', () => {
  it('description reaches the events; an unknown agent lists the available ones; inputs are typed', async () => {
    const { home, fake } = await setup();
    home.file('agents/lead.md', LEAD_MD);
    home.agent('helper', HELPER);
    fake.respond((request) => {
      if (roleOf(request) === 'helper') return { text: 'helped' };
      return request.toolResults.length === 0
        ? {
            toolCalls: [
              {
                name: 'call_agent',
                arguments: {
                  agent: 'helper',
                  task: 'count',
                  description: 'count the tests',
                  inputs: { count: 2 },
                },
              },
              { name: 'call_agent', arguments: { agent: 'nope', task: 'x' } },
            ],
          }
        : { text: 'lead done' };
    });
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--events', '-'],
      {
        env: home.env(fake.url),
      },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
    const parameters = callAgentParameters(lead[0]);
    expect(parameters.description).toMatchObject({ type: 'string' });
    expect(parameters.inputs).toMatchObject({
      type: 'object',
      properties: { count: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
    });
    expect(lead[1]?.toolResults[1]).toMatchObject({
      isError: true,
      content: 'call_agent error: agent "nope" is not in this agent\'s sub_agents list (available: helper)',
    });
    const start = events(result.stderr).find((e) => e.type === 'agent.start' && e.path !== 'lead');
    expect(start).toMatchObject({ agent: 'helper', description: 'count the tests' });
    const validate = new Ajv2020({ strict: false }).compile(eventSchema);
    expect(validate(start), JSON.stringify(validate.errors)).toBe(true);
  });

  it("a Go-only caller keeps Go's call_agent: no description, Go's unknown-agent error", async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper'));
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'call_agent', arguments: { agent: 'nope', task: 'x', description: 'd' } }] }
        : { text: 'lead done' },
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    expect(Object.keys(callAgentParameters(fake.requests[0]))).toEqual(['agent', 'task', 'context']);
    expect(fake.requests[1]?.toolResults[0]?.content).toBe(
      'call_agent error: agent "nope" is not in this agent\'s sub_agents list',
    );
  });

  it("with --workdir, a Go TOML child without a workdir runs in its caller's; without it, in the current one", async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/here.txt', 'x'));
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    home.agent('helper', agentToml('helper', { extra: ['tools = ["list_directory"]'] }));
    fake.respond((request) => {
      if (roleOf(request) === 'helper') return { text: 'helped' };
      return request.toolResults.length === 0
        ? { toolCalls: [{ name: 'call_agent', arguments: { agent: 'helper', task: 'look' } }] }
        : { text: 'lead done' };
    });
    const run = (extra: string[]) =>
      runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--events', '-', ...extra], {
        env: home.env(fake.url),
        cwd: home.root,
      });
    const helperWorkdir = (stderr: string) =>
      events(stderr).find((e) => e.type === 'agent.ready' && e.agent === 'helper')?.workdir;
    const given = await run(['--workdir', workdir]);
    expect(given.code).toBe(0);
    expect(helperWorkdir(given.stderr)).toBe(workdir);
    const plain = await run([]);
    expect(plain.code).toBe(0);
    expect(helperWorkdir(plain.stderr)).not.toBe(workdir);
  });
});
