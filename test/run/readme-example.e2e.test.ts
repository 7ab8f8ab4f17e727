import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { e2eHomes, REPO_ROOT, runAxe } from './cli.js';

/**
 * The worked example of "Sub-agents: outcomes, budgets, inputs and outputs" in docs/run.md, its
 * agent files taken from the page as written: they load, and they do what the text around them says.
 */
const setup = e2eHomes();

function readmeAgents(
  heading = '### Sub-agents: outcomes, budgets, inputs and outputs',
): Record<string, string> {
  const readme = readFileSync(path.join(REPO_ROOT, 'docs/run.md'), 'utf8');
  const start = readme.indexOf(heading);
  const section = readme.slice(start, readme.indexOf('\n### ', start + 1));
  const files: Record<string, string> = {};
  for (const [, name, body] of section.matchAll(/```toml\n# agents\/([\w-]+)\.toml\n([\s\S]*?)```/g)) {
    if (name && body !== undefined) files[name] = body;
  }
  return files;
}

const REPORT = { ok: false, findings: ['src/auth.ts:42 builds the query by concatenation'] };

describe('the worked example of docs/run.md', () => {
  it('checker: typed inputs in the prompt, read-only tools, a checked value on stdout', async () => {
    const agents = readmeAgents();
    expect(Object.keys(agents)).toEqual(['checker', 'lead']);
    const { home, fake } = await setup();
    for (const [name, toml] of Object.entries(agents)) home.agent(name, toml);
    home.file('src/auth.ts', 'query("SELECT * FROM users WHERE id=" + id)\n');
    const env = home.env(fake.url);
    expect(await runAxe(['validate', '--agents-dir', home.agentsDir], { env })).toMatchObject({ code: 0 });

    fake.respond((request) => {
      if (request.system.startsWith('Have checker')) {
        return request.toolResults.length === 0
          ? {
              toolCalls: [
                {
                  name: 'call_agent',
                  arguments: {
                    agent: 'checker',
                    task: 'check it',
                    inputs: { file_path: 'src/auth.ts', concern: 'SQL injection' },
                  },
                },
              ],
            }
          : { text: 'summed up' };
      }
      return request.toolResults.length === 0
        ? { toolCalls: [{ name: 'read_file', arguments: { path: 'src/auth.ts' } }] }
        : { toolCalls: [{ name: 'submit_result', arguments: { report: REPORT } }] };
    });
    const alone = await runAxe(
      [
        'run',
        'checker',
        '--agents-dir',
        home.agentsDir,
        '--input',
        'file_path=src/auth.ts',
        '--input',
        'concern=SQL injection',
      ],
      { env, cwd: home.root },
    );
    expect(alone).toMatchObject({ code: 0, stdout: `${JSON.stringify(REPORT)}\n` });
    const checker = fake.requests[0];
    expect(checker?.system).toContain('Check src/auth.ts for SQL injection.');
    expect(checker?.toolNames).toEqual(['read_file', 'grep_files', 'submit_result', 'submit_error']);

    const led = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: home.root,
    });
    expect(led.stderr).toBe('');
    expect(led).toMatchObject({ code: 0, stdout: 'summed up' });
    const outcome = JSON.parse(fake.requests.at(-1)?.toolResults[0]?.content ?? '{}');
    expect(outcome).toMatchObject({
      status: 'completed',
      result: REPORT,
      agent_id: 'lead/call_agent#1:checker',
      turns_used: 2,
      tool_calls: 2,
      files_read: ['src/auth.ts'],
      files_modified: [],
    });
  });

  it('the spawn_agents example loads and offers spawn_agents', async () => {
    const agents = readmeAgents('### Sub-agents: `spawn_agents`');
    expect(Object.keys(agents)).toEqual(['auditor']);
    const { home, fake } = await setup();
    home.agent('auditor', agents.auditor ?? '');
    const env = home.env(fake.url);
    expect(await runAxe(['validate', '--agents-dir', home.agentsDir], { env })).toMatchObject({ code: 0 });
    fake.respond(() => ({ text: 'audited' }));
    const run = await runAxe(['run', 'auditor', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: home.root,
    });
    expect(run).toMatchObject({ code: 0, stdout: 'audited' });
    expect(fake.requests[0]?.toolNames).toEqual([
      'read_file',
      'grep_files',
      'list_directory',
      'spawn_agents',
    ]);
  });
});
