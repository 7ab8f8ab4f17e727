import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { e2eHomes, lines, runAxe } from './cli.js';

/**
 * `--quiet` silences warnings, never errors; a Claude Code `Bash` that becomes run_command is said
 * once where the file is looked at (`validate`, `--dry-run`), not on every run.
 */
const setup = e2eHomes();

const CLAUDE_AGENT = [
  '---',
  'name: shell',
  'description: Runs things',
  'tools: Read, Bash',
  'color: red',
  'model: claude-test',
  '---',
  'ROLE:shell',
  '',
].join('\n');

describe('--quiet and the Bash note', () => {
  it('a run says its warnings, --quiet none; an error is said either way', async () => {
    const { home, fake } = await setup();
    const dir = path.join(home.root, 'claude');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'shell.md'), CLAUDE_AGENT.replace('claude-test', 'anthropic/claude-test'));
    fake.respond(() => ({ text: 'ran' }));
    const args = ['run', 'shell', '--agents-dir', dir, '-p', 'x'];
    const env = home.env(fake.url);
    const plain = await runAxe(args, { env });
    expect(plain).toMatchObject({ code: 0, stdout: 'ran' });
    expect(lines(plain.stderr)).toEqual([expect.stringMatching(/shell\.md:5:8: color: .* ignored$/)]);
    const quiet = await runAxe([...args, '--quiet'], { env });
    expect(quiet).toMatchObject({ code: 0, stdout: 'ran', stderr: '' });
    const failing = await runAxe([...args, '-q'], { env: home.env(undefined, { ANTHROPIC_API_KEY: '' }) });
    expect(failing.code).toBe(2);
    expect(lines(failing.stderr)).toEqual([expect.stringMatching(/^axe: API key for provider "anthropic"/)]);
  });

  it('Bash → run_command: one note in validate and --dry-run, none in a run', async () => {
    const { home, fake } = await setup();
    const dir = path.join(home.root, 'claude');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'shell.md'), CLAUDE_AGENT.replace('claude-test', 'anthropic/claude-test'));
    fake.respond(() => ({ text: 'ran' }));
    const env = home.env(fake.url);
    const note = /tools: "Bash" is run_command: its commands run without asking anyone first/;
    const validate = await runAxe(['validate', '--agents-dir', dir], { env });
    expect(validate.code).toBe(0);
    expect(lines(validate.stdout + validate.stderr).filter((line) => note.test(line))).toHaveLength(1);
    const dry = await runAxe(['run', 'shell', '--agents-dir', dir, '-p', 'x', '--dry-run'], { env });
    expect(dry.code).toBe(0);
    expect(lines(dry.stderr).filter((line) => note.test(line))).toEqual([
      expect.stringMatching(/^Note: .*shell\.md:4:8: /),
    ]);
    const run = await runAxe(['run', 'shell', '--agents-dir', dir, '-p', 'x'], { env });
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(note);
  });

  it('a Claude Code file that loads in Claude Code: model fable, a skills entry that is not there (a warning)', async () => {
    const { home, fake } = await setup();
    const dir = path.join(home.root, 'claude');
    mkdirSync(dir, { recursive: true });
    const file = ['---', 'name: fab', 'skills: [nothere]', 'model: fable', '---', 'ROLE:fab', ''].join('\n');
    writeFileSync(path.join(dir, 'fab.md'), file);
    fake.respond(() => ({ text: 'fine' }));
    const env = home.env(fake.url);
    const validate = await runAxe(['validate', '--agents-dir', dir], { env });
    expect(validate.code).toBe(0);
    expect(validate.stdout + validate.stderr).toMatch(
      /warning: .*fab\.md:3:\d+: skills: "nothere" not found/,
    );
    const run = await runAxe(['run', 'fab', '--agents-dir', dir, '-p', 'x'], { env });
    expect(run).toMatchObject({ code: 0, stdout: 'fine' });
    expect(lines(run.stderr)).toEqual([
      expect.stringMatching(/^Warning: .*fab\.md: skill "nothere" not found .*: run without it$/),
    ]);
    expect(fake.requests[0]?.model).toBe('claude-fable-5-2');
  });

  it('--dry-run of a Markdown agent: Params names what is sent, Tools what is offered; a Go file keeps Go lines', async () => {
    const { home } = await setup();
    const dir = path.join(home.root, 'claude');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      path.join(dir, 'lead.md'),
      '---\nname: lead\ntools: Read, Agent(helper)\nmodel: sonnet\n---\nROLE:lead\n',
    );
    writeFileSync(path.join(dir, 'helper.md'), '---\nname: helper\nmodel: sonnet\n---\nROLE:helper\n');
    home.agent('golead', 'name = "golead"\nmodel = "anthropic/claude-test"\nsub_agents = ["helper"]\n');
    const env = home.env();
    const markdown = await runAxe(['run', 'lead', '--agents-dir', dir, '-p', 'x', '--dry-run'], { env });
    expect(markdown.code).toBe(0);
    expect(markdown.stdout).toContain("\nParams:   (none sent: the provider's defaults)\n");
    expect(markdown.stdout).toContain('\n--- Tools ---\nread_file, call_agent\n');
    const go = await runAxe(['run', 'golead', '--agents-dir', home.agentsDir, '-p', 'x', '--dry-run'], {
      env,
    });
    expect(go.code).toBe(0);
    expect(go.stdout).toContain('\nParams:   temperature=0, max_tokens=0\n');
    expect(go.stdout).toContain('\n--- Tools ---\n(none)\n');
  });
});
