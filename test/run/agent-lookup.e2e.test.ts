import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { e2eHomes, runAxe } from './cli.js';

/** Where `axe run <agent>` finds agents: the project's own tool folders, and a file by path. */
const setup = e2eHomes();

function markdownAgent(name: string, prompt: string): string {
  return `---\nname: ${name}\nmodel: anthropic/claude-test\n---\n${prompt}\n`;
}

describe.concurrent('agent lookup', () => {
  it("finds the project's .claude/agents, .gemini/agents and .opencode/agent files; ./axe/agents wins", async () => {
    const { home, fake } = await setup();
    const project = path.join(home.root, 'project');
    for (const [dir, name] of [
      ['.claude/agents', 'reviewer'],
      ['.gemini/agents', 'gem'],
      ['.opencode/agent', 'oc'],
      ['axe/agents', 'both'],
      ['.claude/agents', 'both'],
    ] as const) {
      mkdirSync(path.join(project, dir), { recursive: true });
      writeFileSync(path.join(project, dir, `${name}.md`), markdownAgent(name, `ROLE:${dir}/${name}`));
    }
    fake.respond((request) => ({ text: request.system }));
    const env = home.env(fake.url);
    const run = (agent: string) => runAxe(['run', agent, '-p', 'x'], { env, cwd: project });
    expect((await run('reviewer')).stdout).toBe('ROLE:.claude/agents/reviewer');
    expect((await run('gem')).stdout).toBe('ROLE:.gemini/agents/gem');
    expect((await run('oc')).stdout).toBe('ROLE:.opencode/agent/oc');
    expect((await run('both')).stdout).toBe('ROLE:axe/agents/both');
    // A Markdown agent without tools: the read-only defaults, said with --verbose only.
    const verbose = await runAxe(['run', 'reviewer', '-p', 'x', '-v'], { env, cwd: project });
    expect(verbose.stderr).toMatch(
      /^Note: .*reviewer\.md: tools: not given: the read-only tools list_directory, read_file, glob_files, grep_files/m,
    );
    expect((await run('reviewer')).stderr).toBe('');
    expect(fake.requests.at(-1)?.toolNames).toEqual([
      'list_directory',
      'read_file',
      'glob_files',
      'grep_files',
    ]);
  });

  it('runs a file by path; a missing agent names where axe looked and the nearest name', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'elsewhere', 'one-off.md');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, markdownAgent('one-off', 'ROLE:one-off'));
    fake.respond((request) => ({ text: request.system }));
    const env = home.env(fake.url);
    const byPath = await runAxe(['run', './elsewhere/one-off.md', '-p', 'x'], { env, cwd: home.root });
    expect(byPath).toMatchObject({ code: 0, stdout: 'ROLE:one-off' });
    const missing = await runAxe(['run', './elsewhere/none.md'], { env, cwd: home.root });
    expect(missing).toMatchObject({ code: 2, stderr: 'axe: agent file not found: ./elsewhere/none.md\n' });
    home.agent('reviewer', 'name = "reviewer"\nmodel = "anthropic/claude-test"\n');
    const typo = await runAxe(['run', 'reviwer', '--agents-dir', home.agentsDir], { env, cwd: home.root });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^axe: agent config not found: reviwer \(looked in .*\/agents, .*\/axe\/agents, .*\) \(did you mean "reviewer"\?\)\n$/,
    );
  });
});
