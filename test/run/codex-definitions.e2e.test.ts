import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * Codex-style definitions (`agentType`, `whenToUse`, `modelConfig`, `runConfig`, `inputConfig`,
 * `outputConfig`, `promptConfig`), YAML and Markdown, load as Codex loads them: each field lands
 * in axe's own mechanism, and what axe cannot map is a warning naming it.
 */
const setup = e2eHomes();

/** A YAML definition in Codex's documented shape (written for this test). */
const REVIEWER_YAML = `agentType: reviewer
displayName: Careful Reviewer
whenToUse: Reviews one file for bugs
source: project
tools: [read_file, glob]
modelConfig:
  model: anthropic/claude-test
  temperature: 0.2
  topP: 0.9
  seed: 7
runConfig:
  maxTurns: 4
  maxTimeSeconds: 30
inputConfig:
  inputs:
    file_path: { type: string, required: true, description: File to review }
outputConfig:
  outputName: review
  description: The verdict
  schema:
    type: object
    required: [verdict]
    properties:
      verdict: { type: string, enum: [approve, reject] }
promptConfig:
  systemPrompt: "ROLE:reviewer of \${file_path} in \${cwd}"
  query: Review \${file_path} now.
`;

/** A Markdown definition: the body is its prompt; three turns, then one grace turn of 5 s. */
const LOOPER_MD = `---
agentType: looper
whenToUse: Keeps listing
tools: [list_directory]
runConfig:
  maxTurns: 3
  gracePeriodSeconds: 5
---
ROLE:looper works in \${cwd}
`;

const body = (request: RecordedRequest | undefined) => request?.body as Record<string, unknown> | undefined;

describe.concurrent('Codex definitions', () => {
  it('a YAML definition as a child: prompt and query substituted, params sent, schema-checked submit_result', async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/a.go', 'package a'));
    home.file('agents/reviewer.yaml', REVIEWER_YAML);
    home.agent('lead', agentToml('lead', { subAgents: ['reviewer'], extra: [`workdir = "${workdir}"`] }));
    fake.respond((request) => {
      if (roleOf(request) === 'reviewer')
        return request.toolResults.length === 0
          ? { toolCalls: [{ name: 'submit_result', arguments: { review: { verdict: 'maybe' } } }] }
          : { toolCalls: [{ name: 'submit_result', arguments: { review: { verdict: 'approve' } } }] };
      return request.toolResults.length === 0
        ? {
            toolCalls: [
              {
                name: 'call_agent',
                arguments: { agent: 'reviewer', task: 'look for bugs', inputs: { file_path: 'a.go' } },
              },
            ],
          }
        : { text: `lead got ${request.toolResults[0]?.content}` };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'lead got {"verdict":"approve"}' });
    const child = fake.requests.filter((r) => roleOf(r) === 'reviewer');
    // The first submission broke the schema and was refused; the second one ended the child.
    expect(child).toHaveLength(2);
    expect(child[0]?.system).toBe(`ROLE:reviewer of a.go in ${workdir}`);
    // A child inherits its caller's workdir (it has none of its own).
    expect(child[0]?.lastUserText).toBe('Review a.go now.\n\nTask: look for bugs');
    expect(child[0]?.toolNames).toEqual(['read_file', 'glob_files', 'submit_result', 'submit_error']);
    expect(body(child[0])).toMatchObject({ temperature: 0.2, top_p: 0.9 });
    expect(child[1]?.toolResults[0]).toMatchObject({ isError: true });
    // The lead, a Go-only file, sends no top_p.
    const lead = fake.requests.find((r) => roleOf(r) === 'lead');
    expect(body(lead)).not.toHaveProperty('top_p');
  });

  it("a Markdown definition's runConfig.maxTurns stops a looping agent after 3 turns, then its grace turn", async () => {
    const { home, fake } = await setup();
    home.file('agents/looper.md', LOOPER_MD);
    home.agent('lead', agentToml('lead', { subAgents: ['looper'] }));
    fake.respond((request) => {
      if (roleOf(request) === 'looper')
        return request.lastUserText.includes('one final chance')
          ? { text: 'partial list' }
          : { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] };
      return request.toolResults.length === 0
        ? { toolCalls: [{ name: 'call_agent', arguments: { agent: 'looper', task: 'list forever' } }] }
        : { text: `lead got ${request.toolResults[0]?.content}` };
    });
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--events', '-'],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(0);
    // The grace turn is told in the events, with what stopped the agent and whether it answered.
    const grace = result.stderr
      .split('\n')
      .filter((line) => line.includes('"type":"grace.'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(grace).toMatchObject([
      { type: 'grace.start', agent: 'looper', reason: 'max_turns', seconds: 5 },
      { type: 'grace.end', agent: 'looper', answered: true },
    ]);
    const looper = fake.requests.filter((r) => roleOf(r) === 'looper');
    // Three turns of its own, then the grace turn.
    expect(looper).toHaveLength(4);
    expect(looper[0]?.toolNames).toEqual(['list_directory', 'submit_result', 'submit_error']);
    expect(looper[3]?.toolNames).toEqual([]);
    expect(JSON.parse(result.stdout)).toMatchObject({ content: 'lead got partial list' });
  });

  it('validate names each field it cannot map; agents show --json and --dry-run show the mapped ones', async () => {
    const { home, fake } = await setup();
    home.file('agents/reviewer.yaml', REVIEWER_YAML);
    const env = home.env(fake.url);
    const validate = await runAxe(['validate', 'reviewer', '--agents-dir', home.agentsDir], { env });
    expect(validate.code).toBe(0);
    const warnings = validate.stdout
      .split('\n')
      .filter((line) => line.startsWith('warning:'))
      .map((line) => line.replace(/^warning: [^ ]+ /, ''));
    expect(warnings).toEqual([
      'source: Codex field not mapped by axe (axe knows a definition by the file it is in); ignored',
      'modelConfig.seed: Codex field not mapped by axe; ignored',
    ]);
    const show = await runAxe(['agents', 'show', 'reviewer', '--agents-dir', home.agentsDir, '--json'], {
      env,
    });
    expect(JSON.parse(show.stdout)).toMatchObject({
      name: 'reviewer',
      dialect: 'codex',
      description: 'Reviews one file for bugs',
      display_name: 'Careful Reviewer',
      model: 'anthropic/claude-test',
      query: `Review \${file_path} now.`,
      tools: ['read_file', 'glob_files'],
      params: { temperature: 0.2, top_p: 0.9 },
      budget: { max_turns: 4, timeout: 30 },
      input: { file_path: { type: 'string', required: true } },
      output: { name: 'review', description: 'The verdict', schema: { required: ['verdict'] } },
    });
    const dry = await runAxe(
      [
        'run',
        'reviewer',
        '--agents-dir',
        home.agentsDir,
        '--dry-run',
        '--input',
        'file_path=b.go',
        '-p',
        'hi',
      ],
      { env },
    );
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(
      [
        '--- More ---',
        'Format:       codex definition',
        'Display name: Careful Reviewer',
        'Query:        Review b.go now.',
        'Params:       top_p=0.9',
        'Budget:       max_turns=4, timeout=30s',
      ].join('\n'),
    );
    expect(dry.stdout).toContain('submit_result(review): The verdict');
  });

  it('a wrong value is named as the file writes it, with its line (exit 2)', async () => {
    const { home, fake } = await setup();
    home.file('agents/short.yaml', 'agentType: short\nrunConfig:\n  maxTurns: 0\n');
    home.file('agents/mixed.md', '---\nagentType: mixed\npromptConfig:\n  systemPrompt: hi\n---\nbody\n');
    const env = home.env(fake.url);
    const short = await runAxe(['run', 'short', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(short).toMatchObject({ code: 2, stdout: '' });
    expect(short.stderr.trim()).toMatch(/short\.yaml:3:3: runConfig\.maxTurns: must be >= 1 \(got 0\)$/);
    const mixed = await runAxe(['run', 'mixed', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(mixed).toMatchObject({ code: 2, stdout: '' });
    expect(mixed.stderr.trim()).toMatch(
      /mixed\.md:4:\d+: promptConfig\.systemPrompt: given both in the front-matter and as the Markdown body; keep one$/,
    );
  });
});
