// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${name} syntax of agent files is what is under test
import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** Typed inputs: declared in the file, passed by `--input` / `--inputs-json` / `call_agent`, substituted into the prompt. */
const setup = e2eHomes();

const REVIEWER = [
  'system_prompt = "ROLE:reviewer review ${file_path} x${count} ${tags} ${strict} in ${cwd} as ${agent}; keep ${HOME}"',
  '[input.file_path]',
  'type = "string"',
  'required = true',
  'description = "File to review"',
  '[input.count]',
  'type = "integer"',
  '[input.tags]',
  'type = "string[]"',
  '[input.strict]',
  'type = "boolean"',
];

async function seed() {
  const { home, fake } = await setup();
  home.agent(
    'reviewer',
    agentToml('reviewer', { extra: [`workdir = "${home.root}"`, ...REVIEWER] }).replace(
      /^system_prompt = "ROLE:reviewer"\n/m,
      '',
    ),
  );
  const run = (args: string[]) =>
    runAxe(['run', 'reviewer', '--agents-dir', home.agentsDir, '-p', 'go', ...args], {
      env: home.env(fake.url),
    });
  return { home, fake, run };
}

describe.concurrent('typed inputs', () => {
  it('--input values, coerced to their types, replace ${name}, ${cwd} and ${agent}; other ${…} stay', async () => {
    const { home, fake, run } = await seed();
    fake.enqueue({ text: 'ok' });
    const result = await run([
      '--input',
      'file_path=src/a.ts',
      '--input',
      'count=3',
      '--input=tags=x,y',
      '--input',
      'strict=true',
    ]);
    expect(result).toMatchObject({ code: 0, stdout: 'ok', stderr: '' });
    expect(fake.requests[0]?.system).toBe(
      `ROLE:reviewer review src/a.ts x3 ["x","y"] true in ${home.root} as reviewer; keep \${HOME}`,
    );
    fake.enqueue({ text: 'ok' });
    await run(['--inputs-json', '{"file_path":"b.ts","tags":["p"]}']);
    expect(fake.requests[1]?.system).toMatch(/^ROLE:reviewer review b\.ts x \["p"\] {2}in /);
  });

  it('a missing, unknown or mistyped input is exit 2 naming it, before any request', async () => {
    const { fake, run } = await seed();
    const cases: [string[], string][] = [
      [
        [],
        'axe: agent "reviewer": missing required input "file_path" (file_path (string, required): File to review)\n',
      ],
      [
        ['--input', 'file_path=a', '--input', 'colour=red'],
        'axe: unknown input "colour": agent "reviewer" takes file_path, count, tags, strict\n',
      ],
      [
        ['--input', 'file_path=a', '--input', 'count=2.5'],
        'axe: input "count" must be an integer (got "2.5")\n',
      ],
      [
        ['--input', 'file_path=a', '--input', 'strict=maybe'],
        'axe: input "strict" must be true or false (got "maybe")\n',
      ],
      [['--input', 'nonsense'], 'axe: --input "nonsense": expected name=value\n'],
      [['--inputs-json', '[1]'], 'axe: --inputs-json: expected a JSON object of input values\n'],
    ];
    for (const [args, stderr] of cases) {
      const result = await run(args);
      expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({
        code: 2,
        stdout: '',
        stderr,
      });
    }
    expect(fake.requests).toEqual([]);
  });

  it('--dry-run and agents show list the inputs', async () => {
    const { home, fake, run } = await seed();
    const dry = await run(['--dry-run', '--input', 'file_path=a.ts']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      '--- Inputs ---\nfile_path (string, required): File to review = "a.ts"\ncount (integer) = (not given)\n',
    );
    const show = await runAxe(['agents', 'show', 'reviewer', '--agents-dir', home.agentsDir], {
      env: home.env(fake.url),
    });
    expect(show.stdout).toContain('Input:          file_path (string, required): File to review\n');
  });

  it('call_agent: an inputs argument only when a sub-agent has inputs; checked like the CLI, as error results', async () => {
    const { home, fake } = await seed();
    home.agent('plain', agentToml('plain'));
    home.agent('lead', agentToml('lead', { subAgents: ['reviewer', 'plain'] }));
    home.agent('solo', agentToml('solo', { subAgents: ['plain'] }));
    fake.respond((request) => {
      const role = roleOf(request);
      if (role === 'reviewer' || role === 'plain') return { text: `${role} done` };
      if (request.toolResults.length > 0) return { text: 'lead done' };
      return {
        toolCalls: [
          {
            ...callAgent('reviewer', 'go'),
            arguments: { agent: 'reviewer', task: 'go', inputs: { file_path: 'z.ts', count: '7' } },
          },
          {
            ...callAgent('reviewer', 'go'),
            arguments: { agent: 'reviewer', task: 'go', inputs: { count: 1 } },
          },
          { ...callAgent('plain', 'go'), arguments: { agent: 'plain', task: 'go', inputs: { x: 1 } } },
        ],
      };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead');
    const tool = (
      lead[0]?.body as
        | { tools: { input_schema: { properties: Record<string, { description: string }> } }[] }
        | undefined
    )?.tools[0];
    expect(tool?.input_schema.properties.inputs?.description).toBe(
      'Typed inputs of the agent called, by name. reviewer: file_path (string, required): File to review; count (integer); tags (string[]); strict (boolean).',
    );
    const reviewer = fake.requests.find((r) => roleOf(r) === 'reviewer');
    expect(reviewer?.system).toMatch(/^ROLE:reviewer review z\.ts x7 /);
    expect(lead.at(-1)?.toolResults.map((r) => [r.content, r.isError === true])).toEqual([
      ['reviewer done', false],
      [expect.stringContaining('missing required input "file_path"'), true],
      [expect.stringContaining('unknown input "x": agent "plain" takes no inputs'), true],
    ]);

    fake.respond(() => ({ text: 'solo done' }));
    await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'go'], { env: home.env(fake.url) });
    const solo = fake.requests.find((r) => roleOf(r) === 'solo')?.body as {
      tools: { input_schema: { properties: object } }[];
    };
    expect(Object.keys(solo.tools[0]?.input_schema.properties ?? {})).toEqual(['agent', 'task', 'context']);
  });
});
